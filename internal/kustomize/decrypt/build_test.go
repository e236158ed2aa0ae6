package decrypt

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/weir-gitops/weir/internal/kustomize"
)

// Build sees the Decryptor through kustomize's interface only.
var _ kustomize.Decryptor = (*Decryptor)(nil)

// TestBuild runs kustomize.Build over encrypted trees with a real
// Decryptor: the pipeline of kustomize-controller, end to end.
func TestBuild(t *testing.T) {
	ak, pk, other := newAgeKey(t), newPGPKey(t), newAgeKey(t)
	wholeAge, err := EncryptYAML([]byte(plainSecret), []string{ak.recipient})
	if err != nil {
		t.Fatal(err)
	}
	wholePGP := encryptPGPDoc(t, strings.Replace(plainSecret, "name: db", "name: db-pgp", 1), FormatYAML, pk, SecretEncryptedRegex)
	env := encryptAgeDoc(t, "DB_PASSWORD="+secretValue+"\nDB_USER=app\n", FormatDotenv, ak.recipient, "")
	cfg := encryptAgeDoc(t, "user: app\npassword: "+secretValue+"\n", FormatYAML, ak.recipient, "")
	token := encryptAgeDoc(t, secretValue, FormatBinary, ak.recipient, "")
	// A value with a variable in it: decryption comes before substitution.
	withVar, err := EncryptYAML([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: dsn\n  namespace: apps\nstringData:\n  dsn: postgres://${DB_HOST}/app\n"), []string{ak.recipient})
	if err != nil {
		t.Fatal(err)
	}

	files := map[string]string{
		"whole/kustomization.yaml": "namespace: prod\nnamePrefix: prod-\nresources: [secret.yaml, secret-pgp.yaml]\n",
		"whole/secret.yaml":        string(wholeAge),
		"whole/secret-pgp.yaml":    string(wholePGP),
		"gen/kustomization.yaml": `secretGenerator:
- name: app
  namespace: apps
  options: {disableNameSuffixHash: true}
  envs: [app.env]
  files: [config.yaml, token=token.enc, plain.txt]
`,
		"gen/app.env":             string(env),
		"gen/config.yaml":         string(cfg),
		"gen/token.enc":           string(token),
		"gen/plain.txt":           "not encrypted\n",
		"vars/kustomization.yaml": "resources: [secret.yaml]\n",
		"vars/secret.yaml":        string(withVar),
		"cm/kustomization.yaml": `configMapGenerator:
- name: leaked
  envs: [app.env]
`,
		"cm/app.env": string(env),
	}
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keys := map[string][]byte{"age.agekey": []byte(ak.identity), "pgp.asc": pk.armored}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	tests := []struct {
		name     string
		path     string
		keys     map[string][]byte // nil: no Decryptor
		postVars map[string]string
		want     map[string]map[string]any // object id → field → value
		is       []error
		errHas   string
	}{
		{
			name: "whole Secrets, age and PGP, after namespace and prefix",
			path: "whole", keys: keys,
			want: map[string]map[string]any{
				"Secret/prod/prod-db":     {"stringData": map[string]any{"password": secretValue}, "data": map[string]any{"token": "aHVudGVyMi1wbGFpbnRleHQ="}},
				"Secret/prod/prod-db-pgp": {"stringData": map[string]any{"password": secretValue}, "data": map[string]any{"token": "aHVudGVyMi1wbGFpbnRleHQ="}},
			},
		},
		{
			name: "secretGenerator with encrypted env, YAML and binary files",
			path: "gen", keys: keys,
			want: map[string]map[string]any{
				"Secret/apps/app": {"data": map[string]any{
					"DB_PASSWORD": b64(secretValue), "DB_USER": b64("app"),
					"config.yaml": b64("user: app\npassword: " + secretValue + "\n"),
					"token":       b64(secretValue),
					"plain.txt":   b64("not encrypted\n"),
				}},
			},
		},
		{
			name: "decryption before substitution",
			path: "vars", keys: keys, postVars: map[string]string{"DB_HOST": "db.internal"},
			want: map[string]map[string]any{
				"Secret/apps/dsn": {"stringData": map[string]any{"dsn": "postgres://db.internal/app"}},
			},
		},
		{
			name: "missing decryption, encrypted Secret",
			path: "whole",
			is:   []error{kustomize.ErrDecryptionRequired},
			// kustomize-controller's wording.
			errHas: "Secret/prod/prod-db is SOPS encrypted, configuring decryption is required for this secret to be reconciled",
		},
		{
			name:   "missing decryption, encrypted secretGenerator file",
			path:   "gen",
			is:     []error{kustomize.ErrDecryptionRequired},
			errHas: "gen/config.yaml is SOPS encrypted, configuring decryption is required for this file to be read (secretGenerator.files entry in gen/kustomization.yaml)",
		},
		{
			name: "wrong key",
			path: "whole", keys: map[string][]byte{"o.agekey": []byte(other.identity)},
			is:     []error{ErrDecryptionFailed, ErrNoMatchingKey},
			errHas: "decryption failed for 'Secret/prod/prod-db': cannot recover the SOPS data key: age key " + ak.recipient,
		},
		{
			name: "wrong key for a secretGenerator file",
			path: "gen", keys: map[string][]byte{"o.agekey": []byte(other.identity)},
			is:     []error{ErrDecryptionFailed, ErrNoMatchingKey},
			errHas: "decryption failed for 'gen/config.yaml' (secretGenerator.files entry in gen/kustomization.yaml)",
		},
		{
			name: "configMapGenerator sources are not decrypted, and not applied",
			path: "cm", keys: keys,
			is:     []error{kustomize.ErrStillEncrypted},
			errHas: "ConfigMap/leaked-",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := kustomize.BuildOptions{Root: root, Path: tt.path}
			if tt.keys != nil {
				opts.Decryptor = mustNew(t, tt.keys)
			}
			if tt.postVars != nil {
				opts.PostBuild = &kustomize.PostBuild{Vars: tt.postVars}
			}
			res, err := kustomize.Build(context.Background(), opts)
			if tt.is != nil || tt.errHas != "" {
				if err == nil {
					t.Fatal("want an error")
				}
				for _, target := range tt.is {
					if !errors.Is(err, target) {
						t.Errorf("error %q does not wrap %v", err, target)
					}
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("error %q does not contain %q", err, tt.errHas)
				}
				if strings.Contains(err.Error(), secretValue) {
					t.Errorf("error leaks the plaintext: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*unstructured.Unstructured{}
			for _, o := range res.Objects {
				if _, ok := o.Object["sops"]; ok {
					t.Errorf("%s kept its sops stanza", kustomize.ObjectID(o))
				}
				got[kustomize.ObjectID(o)] = o
			}
			for id, fields := range tt.want {
				o, ok := got[id]
				if !ok {
					t.Fatalf("no %s in %v", id, keysOf(got))
				}
				for field, want := range fields {
					if diff := cmp.Diff(want, o.Object[field]); diff != "" {
						t.Errorf("%s %s (-want +got):\n%s", id, field, diff)
					}
				}
			}
			y, err := kustomize.ToYAML(res.Objects)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(y), "ENC[AES256_GCM") {
				t.Errorf("ciphertext left in the output:\n%s", y)
			}
		})
	}

	// Decrypted files were served from memory: the tree is untouched.
	for name, content := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil || string(data) != content {
			t.Errorf("%s changed on disk", name)
		}
	}
}

func keysOf(m map[string]*unstructured.Unstructured) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
