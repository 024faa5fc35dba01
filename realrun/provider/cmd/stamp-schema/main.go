// Command stamp-schema writes the Kubernetes provider's package schema with its version set.
//
// Usage: stamp-schema VERSION SRC_DIR DEST_DIR
//
// SRC_DIR is the provider module's cmd/pulumi-resource-kubernetes folder (schema.json,
// terraform-mapping.json); DEST_DIR receives schema-embed.json and terraform-mapping-embed.json,
// which cmd/pulumi-resource-kubernetes embeds. The schema's "version" is what the provider reports
// to the engine through GetSchema, so it must equal the version the binary is stamped with.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: stamp-schema VERSION SRC_DIR DEST_DIR")
		os.Exit(2)
	}
	version, src, dest := os.Args[1], os.Args[2], os.Args[3]
	if err := stampSchema(version, filepath.Join(src, "schema.json"), filepath.Join(dest, "schema-embed.json")); err != nil {
		fail(err)
	}
	if err := compact(filepath.Join(src, "terraform-mapping.json"), filepath.Join(dest, "terraform-mapping-embed.json")); err != nil {
		fail(err)
	}
}

// stampSchema keeps every field of the schema as it is (a generic map, so nothing unknown to this
// program is dropped) and sets the top-level version.
func stampSchema(version, src, dest string) error {
	var spec map[string]any
	if err := readJSON(src, &spec); err != nil {
		return err
	}
	spec["version"] = version
	return writeJSON(dest, spec)
}

func compact(src, dest string) error {
	var mapping any
	if err := readJSON(src, &mapping); err != nil {
		return err
	}
	return writeJSON(dest, mapping)
}

func readJSON(path string, into any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func writeJSON(path string, value any) error {
	raw, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o600)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "stamp-schema:", err)
	os.Exit(1)
}
