// Command cert-manager-controller runs cert-manager's controllers (github.com/cert-manager/cert-manager,
// the version go.mod pins) for the real run (docs/real-run.md#controllers).
//
// Upstream's own main lives in a nested module (cmd/controller, module
// github.com/cert-manager/cert-manager/controller-binary) that the Go module proxy does not serve, so
// this main wires the controllers the pinned module registers (pkg/controller.Known) the way the
// released binary does, through pkg/controller.NewContextFactory. It accepts the arguments the pinned
// chart's Deployment passes (rendered from the chart's own templates) and refuses any other, so a
// flag the chart sets that this main would silently ignore fails the run instead. Not done here, and
// why: leader election (one replica, like the run's kube-controller-manager with --leader-elect=false),
// the metrics and healthz listeners (they would listen beyond loopback; nothing scrapes them here).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// The controllers and issuers the released binary registers (init functions).
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmechallenges"
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmeorders"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/gateways"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/ingresses"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/acme"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/vault"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/metrics"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/acme"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/vault"
)

// defaultControllers is the pinned version's DefaultEnabledControllers
// (internal/apis/config/controller/v1alpha1/defaults.go, an internal package this module cannot
// import); gateway-shim joins them with --enable-gateway-api, as upstream's option handling does.
// Left out: the Venafi issuer (certificaterequests-issuer-venafi), whose client module
// github.com/Venafi/vcert/v5 v5.13.7 the Go module proxy refuses (403); no stack uses Venafi.
var defaultControllers = []string{
	"issuers", "clusterissuers", "certificates-metrics", "ingress-shim", "orders", "challenges",
	"certificaterequests-issuer-acme", "certificaterequests-approver", "certificaterequests-issuer-ca",
	"certificaterequests-issuer-selfsigned", "certificaterequests-issuer-vault", "certificates-trigger", "certificates-issuing",
	"certificates-key-manager", "certificates-request-manager", "certificates-readiness",
	"certificates-revision-manager",
}

func main() {
	flags := pflag.NewFlagSet("cert-manager-controller", pflag.ContinueOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the identity the controller runs as")
	clusterResourceNamespace := flags.String("cluster-resource-namespace", "kube-system", "namespace of ClusterIssuers' secrets")
	flags.String("leader-election-namespace", "kube-system", "accepted as the chart sets it; one replica, no election")
	solverImage := flags.String("acme-http01-solver-image", "", "image of the ACME HTTP-01 solver pods")
	maxChallenges := flags.Int("max-concurrent-challenges", 60, "ACME challenges processed at once")
	enableGatewayAPI := flags.Bool("enable-gateway-api", false, "run the gateway-shim controller")
	enableListenerSets := flags.Bool("enable-gateway-api-listenerset", false, "the gateway-shim reads ListenerSets")
	enableOwnerRef := flags.Bool("enable-certificate-owner-ref", false, "Secrets owned by their Certificate")
	controllers := flags.StringSlice("controllers", []string{"*"}, "controllers to run (* for the defaults, -name to drop one)")
	klogFlags := flagSetOfKlog()
	flags.AddGoFlagSet(klogFlags)
	if err := flags.Parse(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, klog.Background(), "controller")
	log := logf.FromContext(ctx)

	enabled := enabledControllers(*controllers, *enableGatewayAPI)
	opts := controller.ContextOptions{
		Kubeconfig:         *kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace:        *clusterResourceNamespace,
			ClusterIssuerAmbientCredentials: true,
		},
		ACMEOptions: controller.ACMEOptions{
			HTTP01SolverImage:                 *solverImage,
			HTTP01SolverResourceRequestCPU:    resource.MustParse("10m"),
			HTTP01SolverResourceRequestMemory: resource.MustParse("64Mi"),
			HTTP01SolverResourceLimitsCPU:     resource.MustParse("100m"),
			HTTP01SolverResourceLimitsMemory:  resource.MustParse("64Mi"),
			ACMEHTTP01SolverRunAsNonRoot:      true,
			DNS01CheckAuthoritative:           true,
		},
		IngressShimOptions: controller.IngressShimOptions{
			DefaultIssuerKind:                 "Issuer",
			DefaultIssuerGroup:                "cert-manager.io",
			DefaultAutoCertificateAnnotations: []string{"kubernetes.io/tls-acme"},
		},
		CertificateOptions: controller.CertificateOptions{
			EnableOwnerRef:           *enableOwnerRef,
			CopiedAnnotationPrefixes: []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: mustDuration("1h"),
			CertificateRequestMaximumBackoffDuration: mustDuration("32h"),
		},
		SchedulerOptions: controller.SchedulerOptions{MaxConcurrentChallenges: *maxChallenges},
		ConfigOptions:    controller.ConfigOptions{EnableGatewayAPI: *enableGatewayAPI, EnableGatewayAPIListenerSet: *enableListenerSets},
	}
	factory, err := controller.NewContextFactory(ctx, opts)
	if err != nil {
		log.Error(err, "building the controller context")
		os.Exit(1)
	}

	var running sync.WaitGroup
	known := controller.Known()
	for _, name := range enabled {
		construct, ok := known[name]
		if !ok {
			log.Error(nil, "controller not registered", "controller", name)
			os.Exit(1)
		}
		iface, err := construct(factory)
		if err != nil {
			log.Error(err, "constructing controller", "controller", name)
			os.Exit(1)
		}
		running.Add(1)
		go func(name string, c controller.Interface) {
			defer running.Done()
			log.Info("starting controller", "controller", name)
			if err := c.Run(5, ctx); err != nil {
				log.Error(err, "controller failed", "controller", name)
				os.Exit(1)
			}
		}(name, iface)
	}
	shared, err := factory.Build()
	if err != nil {
		log.Error(err, "building the shared informers")
		os.Exit(1)
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	if *enableGatewayAPI {
		shared.GWShared.Start(ctx.Done())
	}
	running.Wait()
	log.Info("control loops exited")
}

// enabledControllers resolves --controllers as upstream documents it: "*" is the default set,
// "-name" removes one, a bare name adds one.
func enabledControllers(requested []string, gatewayAPI bool) []string {
	chosen := map[string]bool{}
	for _, item := range requested {
		switch {
		case item == "*":
			for _, name := range defaultControllers {
				chosen[name] = true
			}
			if gatewayAPI {
				chosen["gateway-shim"] = true
			}
		case strings.HasPrefix(item, "-"):
			delete(chosen, strings.TrimPrefix(item, "-"))
		default:
			chosen[item] = true
		}
	}
	names := make([]string, 0, len(chosen))
	for name := range chosen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
