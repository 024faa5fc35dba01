// Package factory, as the real run builds it: only the in-memory provider.
//
// This file replaces provider/factory/provider.go of sigs.k8s.io/external-dns v0.23.0 in the run's
// unpacked copy of the module (tools/realrun/controllers/external_dns_source.py). Upstream's factory imports every provider, and the
// Go module proxy refuses the sources of two of them (github.com/civo/civogo v0.7.3 and
// github.com/exoscale/egoscale/v3 v3.1.50: "This module version is not available"), so upstream's
// main cannot be built here. The run uses the in-memory provider only (it sends nothing beyond
// loopback); every other package (flags, sources, registry, plan, controller) is upstream's.
package factory

import (
	"context"
	"fmt"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/pkg/apis/externaldns"
	"sigs.k8s.io/external-dns/provider"
	"sigs.k8s.io/external-dns/provider/inmemory"
)

// Select builds the provider the flags name; anything but `inmemory` is refused by name.
func Select(
	ctx context.Context,
	cfg *externaldns.Config,
	domainFilter *endpoint.DomainFilter) (provider.Provider, error) {
	if cfg.Provider != externaldns.ProviderInMemory {
		return nil, fmt.Errorf("provider %q is not built into the real run's external-dns (only %q)",
			cfg.Provider, externaldns.ProviderInMemory)
	}
	p, err := inmemory.New(ctx, cfg, domainFilter)
	if err != nil {
		return nil, err
	}
	if cfg.ProviderCacheTime > 0 {
		p = provider.NewCachedProvider(p, cfg.ProviderCacheTime)
	}
	return newAliasNormalizingMiddleware(p), nil
}
