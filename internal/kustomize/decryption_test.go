package kustomize

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fakeDecryptor stands in for internal/kustomize/decrypt: it "decrypts" files to
// the plaintext it is given and objects by dropping their sops stanza, and
// records what it was asked.
type fakeDecryptor struct {
	files map[string]string // root-relative path → plaintext
	err   error

	mu    sync.Mutex
	calls []string
}

var errFake = errors.New("fake decryption failure")

func (f *fakeDecryptor) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *fakeDecryptor) DecryptFile(path, format string, data []byte) ([]byte, error) {
	f.record("file " + path + " " + format)
	if f.err != nil {
		return nil, f.err
	}
	if p, ok := f.files[path]; ok {
		return []byte(p), nil
	}
	return data, nil
}

func (f *fakeDecryptor) DecryptObject(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, ok := obj.Object["sops"]; !ok {
		return obj, nil
	}
	f.record("object " + ObjectID(obj))
	if f.err != nil {
		return nil, f.err
	}
	out := obj.DeepCopy()
	delete(out.Object, "sops")
	if sd, ok := out.Object["stringData"].(map[string]any); ok {
		for k := range sd {
			sd[k] = "plain-" + k
		}
	}
	return out, nil
}

const annotatedThing = `apiVersion: example.com/v1
kind: SopsSecret
metadata:
  name: in-cluster
  annotations:
    kustomize.toolkit.fluxcd.io/decrypt: disabled
spec:
  token: ENC[AES256_GCM,data:eA==,iv:AAAAAAAAAAAAAAAAAAAAAA==,tag:BBBBBBBBBBBBBBBBBBBBBB==,type:str]
sops:
  mac: ENC[AES256_GCM,data:bWFj,iv:CCCCCCCCCCCCCCCCCCCCCC==,tag:DDDDDDDDDDDDDDDDDDDDDD==,type:str]
  lastmodified: "2024-05-01T10:00:00Z"
`

const encryptedPatch = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  password: ENC[AES256_GCM,data:eA==,iv:AAAAAAAAAAAAAAAAAAAAAA==,tag:BBBBBBBBBBBBBBBBBBBBBB==,type:str]
sops:
  mac: ENC[AES256_GCM,data:bWFj,iv:CCCCCCCCCCCCCCCCCCCCCC==,tag:DDDDDDDDDDDDDDDDDDDDDD==,type:str]
  lastmodified: "2024-05-01T10:00:00Z"
`

func TestBuildDecryption(t *testing.T) {
	root := newRoot(t, map[string]string{
		"secret/kustomization.yaml": "resources: [secret.yaml]\n",
		"secret/secret.yaml":        encryptedSecret,
		"disabled-secret/kustomization.yaml": `resources: [../secret]
commonAnnotations:
  kustomize.toolkit.fluxcd.io/decrypt: Disabled
`,
		"thing/kustomization.yaml": "resources: [thing.yaml]\n",
		"thing/thing.yaml":         annotatedThing,
		"gen/kustomization.yaml": `resources: [target.yaml]
secretGenerator:
- name: app
  options: {disableNameSuffixHash: true}
  envs: [app.env, vars.txt]
  files: [config.yaml=config.enc, token.txt]
configMapGenerator:
- name: plain
  envs: [plain.env]
patches:
- path: patch.yaml
`,
		"gen/app.env":     encryptedEnv,
		"gen/vars.txt":    encryptedEnv,
		"gen/config.enc":  encryptedEnv,
		"gen/token.txt":   encryptedEnv,
		"gen/plain.env":   "A=1\n",
		"gen/patch.yaml":  encryptedPatch,
		"gen/target.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  password: placeholder\n",
		"cm/kustomization.yaml": `configMapGenerator:
- name: leaked
  envs: [app.env]
`,
		"cm/app.env": encryptedEnv,
	})
	genPlain := map[string]string{
		"gen/app.env":    "DB_PASSWORD=s3cret\n",
		"gen/vars.txt":   "LEVEL=debug\n",
		"gen/config.enc": "user: app\n",
		"gen/token.txt":  "tok\n",
		"gen/patch.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  password: patched\n",
	}

	tests := []struct {
		name      string
		path      string
		dec       *fakeDecryptor // nil: no Decryptor
		wantCalls []string
		wantIDs   []string
		is        error
		errHas    string
	}{
		{
			name: "no decryption, encrypted Secret",
			path: "secret",
			is:   ErrDecryptionRequired,
			// Flux's wording, word for word.
			errHas: "Secret/apps/db is SOPS encrypted, configuring decryption is required for this secret to be reconciled",
		},
		{
			name: "decrypt: disabled does not let a v1 Secret with a sops stanza through",
			path: "disabled-secret",
			is:   ErrDecryptionRequired,
		},
		{
			name:    "decrypt: disabled lets another kind through encrypted",
			path:    "thing",
			wantIDs: []string{"SopsSecret/in-cluster"},
		},
		{
			name:      "decrypt: disabled is not decrypted either",
			path:      "thing",
			dec:       &fakeDecryptor{},
			wantIDs:   []string{"SopsSecret/in-cluster"},
			wantCalls: nil,
		},
		{
			name:   "no decryption, encrypted secretGenerator file",
			path:   "gen",
			is:     ErrDecryptionRequired,
			errHas: "gen/config.enc is SOPS encrypted, configuring decryption is required for this file to be read (secretGenerator.files entry in gen/kustomization.yaml)",
		},
		{
			name: "sources decrypted in Flux's formats, objects after the build",
			path: "gen",
			dec:  &fakeDecryptor{files: genPlain},
			wantCalls: []string{
				"file gen/config.enc yaml", // the key names the format
				"file gen/token.txt binary",
				"file gen/app.env dotenv",
				"file gen/vars.txt dotenv", // envs default to dotenv
				"file gen/patch.yaml yaml",
			},
			wantIDs: []string{"ConfigMap/settings", "ConfigMap/plain-89g4tffbfk", "Secret/app"},
		},
		{
			name:      "object decryption",
			path:      "secret",
			dec:       &fakeDecryptor{},
			wantCalls: []string{"object Secret/apps/db"},
			wantIDs:   []string{"Secret/apps/db"},
		},
		{
			name:   "object decryption error names the object",
			path:   "secret",
			dec:    &fakeDecryptor{err: errFake},
			is:     errFake,
			errHas: "decryption failed for 'Secret/apps/db': fake decryption failure",
		},
		{
			name:   "file decryption error names the file and field",
			path:   "gen",
			dec:    &fakeDecryptor{err: errFake},
			is:     errFake,
			errHas: "decryption failed for 'gen/config.enc' (secretGenerator.files entry in gen/kustomization.yaml)",
		},
		{
			name:   "configMapGenerator ciphertext is left alone and refused",
			path:   "cm",
			dec:    &fakeDecryptor{},
			is:     ErrStillEncrypted,
			errHas: "holds SOPS-encrypted content that decryption does not cover",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := BuildOptions{Root: root, Path: tt.path}
			if tt.dec != nil {
				opts.Decryptor = tt.dec
			}
			res, err := Build(context.Background(), opts)
			if tt.is != nil {
				if !errors.Is(err, tt.is) {
					t.Fatalf("want %v, got %v", tt.is, err)
				}
				if !strings.Contains(err.Error(), tt.errHas) {
					t.Errorf("error %q does not contain %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantIDs, ids(res.Objects)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if tt.dec != nil {
				if diff := cmp.Diff(tt.wantCalls, tt.dec.calls); diff != "" {
					t.Errorf("decryptor calls (-want +got):\n%s", diff)
				}
			}
		})
	}

	t.Run("decrypted sources reach the objects", func(t *testing.T) {
		res := mustBuild(t, BuildOptions{Root: root, Path: "gen", Decryptor: &fakeDecryptor{files: genPlain}})
		secret := find(t, res.Objects, "Secret/app")
		data, _, _ := unstructured.NestedStringMap(secret.Object, "data")
		want := map[string]string{
			"DB_PASSWORD": "czNjcmV0", "LEVEL": "ZGVidWc=", "config.yaml": "dXNlcjogYXBwCg==", "token.txt": "dG9rCg==",
		}
		if diff := cmp.Diff(want, data); diff != "" {
			t.Errorf("generated Secret data (-want +got):\n%s", diff)
		}
		cm := find(t, res.Objects, "ConfigMap/settings")
		if v, _, _ := unstructured.NestedString(cm.Object, "data", "password"); v != "patched" {
			t.Errorf("decrypted patch not applied: password=%q", v)
		}
		if !contains(res.Files, "gen/app.env") || !contains(res.Files, "gen/patch.yaml") {
			t.Errorf("decrypted sources missing from Result.Files: %v", res.Files)
		}
	})
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func TestEncryptedErrorMessages(t *testing.T) {
	tests := []struct {
		err  *EncryptedError
		want string
		is   error
	}{
		{
			err:  &EncryptedError{Object: "Secret/apps/db", secret: true},
			want: "Secret/apps/db is SOPS encrypted, configuring decryption is required for this secret to be reconciled",
			is:   ErrDecryptionRequired,
		},
		{
			err:  &EncryptedError{Object: "ConfigMap/apps/c"},
			want: "ConfigMap/apps/c is SOPS encrypted, configuring decryption is required for this object to be reconciled",
			is:   ErrDecryptionRequired,
		},
		{
			err:  &EncryptedError{File: "a/app.env", Field: "secretGenerator.envs", Kustomization: "a/kustomization.yaml"},
			want: "a/app.env is SOPS encrypted, configuring decryption is required for this file to be read (secretGenerator.envs entry in a/kustomization.yaml)",
			is:   ErrDecryptionRequired,
		},
		{
			err:  &EncryptedError{Object: "ConfigMap/apps/c", DecryptionConfigured: true},
			want: "ConfigMap/apps/c holds SOPS-encrypted content that decryption does not cover (only Secrets, whole SOPS documents and secretGenerator and patch files are decrypted); refusing to apply ciphertext",
			is:   ErrStillEncrypted,
		},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
		if !errors.Is(tt.err, tt.is) {
			t.Errorf("%q does not wrap %v", tt.err, tt.is)
		}
	}
}
