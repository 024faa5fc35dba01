// Command pulumi-resource-kubernetes serves the Kubernetes provider of the pinned
// github.com/pulumi/pulumi-kubernetes/provider/v4 module.
//
// Upstream's own main embeds a schema that its release build generates with the version stamped
// in; the module as published carries only the unstamped schema.json. `make realrun-tools` stamps
// it (cmd/stamp-schema) into this folder before building, so the binary reports the version it is
// installed under and the engine's plugin resolution sees a consistent provider.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var pulumiSchema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
