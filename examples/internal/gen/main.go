// Command gen writes the example fleet's SOPS-encrypted Secret,
// apps/dev/podinfo-token.sops.yaml, from the plaintext below and the age
// recipient in .sops.yaml, then checks that the DEMO ONLY key decrypts it.
// It runs from the examples directory: `go generate ./examples`.
//
// SOPS encryption is randomized, so every run writes a different file that
// decrypts to the same Secret; commit the output.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/internal/kustomize/decrypt"
)

// plaintext is the Secret before encryption. The token is not a secret:
// anyone holding weir's source holds the key it is encrypted to.
const plaintext = `apiVersion: v1
kind: Secret
metadata:
  name: podinfo-token
type: Opaque
stringData:
  token: weir-dev-demo-token
`

// header is prepended to the encrypted file; SOPS leaves comments outside
// the document alone.
const header = `# DEMO ONLY: encrypted with sops to the DEMO ONLY age key of weir's example
# (see .sops.yaml). Written by examples/internal/gen (go generate ./examples).
`

const (
	output   = "apps/dev/podinfo-token.sops.yaml"
	sopsYAML = ".sops.yaml"
	demoKey  = "DEMO-ONLY.agekey"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	recipient, err := ageRecipient(sopsYAML)
	if err != nil {
		return err
	}
	encrypted, err := decrypt.EncryptYAML([]byte(plaintext), []string{recipient})
	if err != nil {
		return fmt.Errorf("encrypting %s: %w", output, err)
	}
	doc := append([]byte(header), encrypted...)
	if err := check(doc); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.FromSlash(output), doc, 0o644); err != nil {
		return err
	}
	fmt.Printf("wrote %s, encrypted to %s\n", output, recipient)
	return nil
}

// ageRecipient reads the age recipient of the first creation rule.
func ageRecipient(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var cfg struct {
		CreationRules []struct {
			Age string `json:"age"`
		} `json:"creation_rules"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if len(cfg.CreationRules) == 0 || cfg.CreationRules[0].Age == "" {
		return "", fmt.Errorf("%s: the first creation rule names no age recipient", path)
	}
	return cfg.CreationRules[0].Age, nil
}

// check decrypts doc with the demo key and compares it with the plaintext.
func check(doc []byte) error {
	key, err := os.ReadFile(demoKey)
	if err != nil {
		return err
	}
	d, err := decrypt.New(map[string][]byte{"age.agekey": key})
	if err != nil {
		return err
	}
	got, err := d.Decrypt(doc, decrypt.FormatForPath(output))
	if err != nil {
		return fmt.Errorf("decrypting what was just encrypted: %w", err)
	}
	var want, have map[string]any
	if err := yaml.Unmarshal([]byte(plaintext), &want); err != nil {
		return err
	}
	if err := yaml.Unmarshal(got, &have); err != nil {
		return err
	}
	w, _ := yaml.Marshal(want)
	h, _ := yaml.Marshal(have)
	if !bytes.Equal(w, h) {
		return fmt.Errorf("decrypted Secret differs from the plaintext:\n%s", got)
	}
	return nil
}
