package decrypt

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The plaintext every fixture hides. No error may ever contain it.
const secretValue = "hunter2-plaintext"

const plainSecret = `apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: apps
type: Opaque
stringData:
  password: ` + secretValue + `
data:
  token: aHVudGVyMi1wbGFpbnRleHQ=
`

func TestNew(t *testing.T) {
	a1, a2 := newAgeKey(t), newAgeKey(t)
	pk := newPGPKey(t)
	protected := newPGPKey(t)
	if err := protected.entity.EncryptPrivateKeys([]byte("passphrase"), nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		keys    map[string][]byte
		wantErr string // substring; empty for success
		ages    int
		pgps    int
	}{
		{name: "empty Secret", keys: nil},
		{
			name: "age identities with comments and blank lines",
			keys: map[string][]byte{"sops.agekey": []byte("# created: today\n# public key: " + a1.recipient + "\n" + a1.identity + "\n\n  " + a2.identity + "\r\n")},
			ages: 2,
		},
		{
			name: "age and PGP side by side with key-service credentials, other keys ignored",
			keys: map[string][]byte{
				"a.agekey": []byte(a1.identity), "b.asc": pk.armored,
				"sops.aws-kms": []byte("aws_access_key_id: x\naws_secret_access_key: y"), "sops.vault-token": []byte("t"),
				"README": []byte("not a key"),
			},
			ages: 1, pgps: 1,
		},
		{
			name:    "malformed age identity names the data key and line, not the text",
			keys:    map[string][]byte{"bad.agekey": []byte("# ok\nAGE-SECRET-KEY-1NOTAKEY" + secretValue + "\n")},
			wantErr: `data key "bad.agekey": line 2: malformed age identity`,
		},
		{
			name:    "age file without identities",
			keys:    map[string][]byte{"empty.agekey": []byte("# nothing\n")},
			wantErr: "no age identity found",
		},
		{
			name:    "public PGP key cannot decrypt",
			keys:    map[string][]byte{"pub.asc": armorPublic(t, pk.entity)},
			wantErr: "no PGP private key found",
		},
		{
			name:    "passphrase-protected PGP key",
			keys:    map[string][]byte{"locked.asc": armorPrivate(t, protected.entity)},
			wantErr: "passphrase-protected",
		},
		{
			name:    "not armored",
			keys:    map[string][]byte{"junk.asc": []byte(secretValue)},
			wantErr: "no armored PGP key found",
		},
		{
			name:    "AWS credentials without the secret key",
			keys:    map[string][]byte{"sops.aws-kms": []byte("aws_access_key_id: " + secretValue)},
			wantErr: `data key "sops.aws-kms": aws_access_key_id and aws_secret_access_key are required`,
		},
		{
			name:    "AWS credentials that are not YAML",
			keys:    map[string][]byte{"sops.aws-kms": []byte("[" + secretValue)},
			wantErr: `data key "sops.aws-kms": not YAML`,
		},
		{
			name:    "Azure credential of no known shape",
			keys:    map[string][]byte{"sops.azure-kv": []byte(`{"tenantId": "t", "clientSecret": "` + secretValue + `"}`)},
			wantErr: `data key "sops.azure-kv": invalid data: requires a 'clientId' field`,
		},
		{
			name:    "empty Google credentials",
			keys:    map[string][]byte{"sops.gcp-kms": []byte("\n")},
			wantErr: `data key "sops.gcp-kms": empty Google credentials`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(tt.keys)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want ErrInvalidKey containing %q, got %v", tt.wantErr, err)
				}
				if strings.Contains(err.Error(), secretValue) || strings.Contains(err.Error(), "AGE-SECRET-KEY") {
					t.Errorf("error leaks key material: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(d.server.age) != tt.ages || len(d.server.pgp) != tt.pgps {
				t.Errorf("parsed %d age and %d PGP keys, want %d and %d", len(d.server.age), len(d.server.pgp), tt.ages, tt.pgps)
			}
		})
	}
}

func TestDecryptObject(t *testing.T) {
	ak, pk, other := newAgeKey(t), newPGPKey(t), newAgeKey(t)
	ageDec := mustNew(t, map[string][]byte{"age.agekey": []byte(ak.identity)})
	pgpDec := mustNew(t, map[string][]byte{"pgp.asc": pk.armored})

	wholeAge, err := EncryptYAML([]byte(plainSecret), []string{ak.recipient})
	if err != nil {
		t.Fatal(err)
	}
	wholePGP := encryptPGPDoc(t, plainSecret, FormatYAML, pk, SecretEncryptedRegex)
	dotenv := encryptAgeDoc(t, "DB_PASSWORD="+secretValue+"\nMODE_unencrypted=prod\n", FormatDotenv, ak.recipient, "")
	yamlDoc := encryptAgeDoc(t, "user: admin\npassword: "+secretValue+"\n", FormatYAML, ak.recipient, "")
	binary := encryptAgeDoc(t, secretValue, FormatBinary, ak.recipient, "")

	want := object(t, []byte(plainSecret))
	// What kustomize does to an object on its way out: a namespace, a
	// name prefix, a label. The MAC no longer matches; decryption works.
	transformed := object(t, wholeAge)
	transformed.SetNamespace("prod")
	transformed.SetName("prod-db")
	transformed.SetLabels(map[string]string{"team": "x"})
	wantTransformed := want.DeepCopy()
	wantTransformed.SetNamespace("prod")
	wantTransformed.SetName("prod-db")
	wantTransformed.SetLabels(map[string]string{"team": "x"})

	secretWith := func(field, key string, value []byte) *unstructured.Unstructured {
		v := string(value)
		if field == "data" {
			v = base64.StdEncoding.EncodeToString(value)
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": "gen", "namespace": "apps"},
			field:      map[string]any{key: v, "plain": "dmFsdWU="},
		}}
	}

	tests := []struct {
		name string
		dec  *Decryptor
		in   *unstructured.Unstructured
		want *unstructured.Unstructured
	}{
		{name: "whole Secret, age", dec: ageDec, in: object(t, wholeAge), want: want},
		{name: "whole Secret, PGP", dec: pgpDec, in: object(t, wholePGP), want: want},
		{name: "whole Secret transformed by kustomize", dec: ageDec, in: transformed, want: wantTransformed},
		{
			name: "dotenv value in data",
			dec:  ageDec, in: secretWith("data", "app.env", dotenv),
			want: secretWith("data", "app.env", []byte("DB_PASSWORD="+secretValue+"\nMODE_unencrypted=prod\n")),
		},
		{
			name: "YAML value in stringData",
			dec:  ageDec, in: secretWith("stringData", "config.yaml", yamlDoc),
			want: secretWith("stringData", "config.yaml", []byte("user: admin\npassword: "+secretValue+"\n")),
		},
		{
			name: "binary value in data",
			dec:  ageDec, in: secretWith("data", "token", binary),
			want: secretWith("data", "token", []byte(secretValue)),
		},
		{
			name: "plain Secret is returned as is",
			dec:  ageDec, in: secretWith("data", "token", []byte("nothing to see")),
			want: secretWith("data", "token", []byte("nothing to see")),
		},
		{
			name: "ConfigMap without a sops stanza is not looked into",
			dec:  ageDec,
			in: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
				"data": map[string]any{"app.env": string(dotenv)},
			}},
			want: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
				"data": map[string]any{"app.env": string(dotenv)},
			}},
		},
		{
			name: "any kind with a whole-document stanza",
			dec:  ageDec,
			in:   object(t, encryptAgeDoc(t, "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  token: "+secretValue+"\n", FormatYAML, ak.recipient, "^spec$")),
			want: object(t, []byte("apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  token: "+secretValue+"\n")),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.in.DeepCopy()
			got, err := tt.dec.DecryptObject(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want.Object, got.Object); diff != "" {
				t.Errorf("decrypted object (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, tt.in.Object); diff != "" {
				t.Errorf("input modified (-before +after):\n%s", diff)
			}
		})
	}

	t.Run("other key", func(t *testing.T) {
		d := mustNew(t, map[string][]byte{"other.agekey": []byte(other.identity)})
		if _, err := d.DecryptObject(object(t, wholeAge)); !errors.Is(err, ErrNoMatchingKey) {
			t.Fatalf("want ErrNoMatchingKey, got %v", err)
		}
	})
}

// TestDecryptErrors checks each failure's cause and that no error quotes
// the plaintext.
func TestDecryptErrors(t *testing.T) {
	ak, other, pk := newAgeKey(t), newAgeKey(t), newPGPKey(t)
	ageDec := mustNew(t, map[string][]byte{"age.agekey": []byte(ak.identity)})

	dotenv := encryptAgeDoc(t, "DB_PASSWORD="+secretValue+"\nMODE_unencrypted=prod\n", FormatDotenv, ak.recipient, "")
	whole, err := EncryptYAML([]byte(plainSecret), []string{ak.recipient})
	if err != nil {
		t.Fatal(err)
	}
	yamlDoc := encryptAgeDoc(t, "name: app\npassword: "+secretValue+"\n", FormatYAML, ak.recipient, "^password$")

	// A ciphertext altered in place: GCM refuses it.
	tamperedValue := object(t, whole)
	enc, _, _ := unstructured.NestedString(tamperedValue.Object, "stringData", "password")
	tamperedValue.Object["stringData"].(map[string]any)["password"] = strings.Replace(enc, "data:", "data:AA", 1)
	// A value that should be encrypted replaced by plaintext: SOPS's own
	// message would quote it.
	plainInjected := object(t, whole)
	plainInjected.Object["stringData"].(map[string]any)["password"] = secretValue

	tests := []struct {
		name  string
		run   func() error
		is    []error
		want  string // substring of the message
		notIs error
	}{
		{
			name: "wrong age key",
			run: func() error {
				_, err := mustNew(t, map[string][]byte{"o.agekey": []byte(other.identity)}).Decrypt(dotenv, FormatDotenv)
				return err
			},
			is:   []error{ErrDecryptionFailed, ErrNoMatchingKey},
			want: "age key " + ak.recipient + ": no matching key in the decryption Secret",
		},
		{
			name: "PGP key for an age document",
			run: func() error {
				_, err := mustNew(t, map[string][]byte{"p.asc": pk.armored}).Decrypt(dotenv, FormatDotenv)
				return err
			},
			is: []error{ErrDecryptionFailed, ErrNoMatchingKey},
		},
		{
			name: "no keys at all",
			run: func() error {
				_, err := mustNew(t, nil).DecryptObject(object(t, whole))
				return err
			},
			is: []error{ErrDecryptionFailed, ErrNoMatchingKey},
		},
		{
			name: "tampered MAC (unencrypted value edited)",
			run: func() error {
				_, err := ageDec.Decrypt(bytes.Replace(dotenv, []byte("MODE_unencrypted=prod"), []byte("MODE_unencrypted=dev"), 1), FormatDotenv)
				return err
			},
			is:   []error{ErrDecryptionFailed, ErrMACMismatch},
			want: "MAC mismatch",
		},
		{
			name: "tampered MAC in a YAML document",
			run: func() error {
				_, err := ageDec.Decrypt(bytes.Replace(yamlDoc, []byte("name: app"), []byte("name: evil"), 1), FormatYAML)
				return err
			},
			is: []error{ErrDecryptionFailed, ErrMACMismatch},
		},
		{
			name: "tampered ciphertext in a whole object",
			run: func() error {
				_, err := ageDec.DecryptObject(tamperedValue)
				return err
			},
			is:    []error{ErrDecryptionFailed},
			want:  "cannot decrypt the values",
			notIs: ErrMACMismatch,
		},
		{
			name: "plaintext where ciphertext belongs",
			run: func() error {
				_, err := ageDec.DecryptObject(plainInjected)
				return err
			},
			is: []error{ErrDecryptionFailed},
		},
		{
			name: "not a SOPS document",
			run: func() error {
				_, err := ageDec.Decrypt([]byte("A="+secretValue+"\n"), FormatDotenv)
				return err
			},
			is:   []error{ErrDecryptionFailed},
			want: "not a SOPS dotenv document",
		},
		{
			name: "malformed dotenv quoting a line",
			run: func() error {
				_, err := ageDec.Decrypt([]byte(secretValue+" no equals sign\nsops_mac=ENC[x]\n"), FormatDotenv)
				return err
			},
			is: []error{ErrDecryptionFailed},
		},
		{
			name: "unsupported key service (Huawei Cloud KMS)",
			run: func() error {
				doc := []byte(`{"data": "ENC[AES256_GCM,data:eA==,iv:x,tag:y,type:str]", "sops": {"hckms": [{"key_id": "tr-west-1:k", "enc": "AQID", "created_at": "2024-01-01T00:00:00Z"}], "lastmodified": "2024-01-01T00:00:00Z", "mac": "ENC[AES256_GCM,data:eA==,iv:x,tag:y,type:str]", "version": "3.8.1"}}`)
				_, err := ageDec.Decrypt(doc, FormatBinary)
				return err
			},
			is:   []error{ErrDecryptionFailed, ErrNoMatchingKey},
			want: "hckms key tr-west-1:k: not supported by weir",
		},
		{
			name: "Secret value with a wrong key names the key",
			run: func() error {
				s := object(t, []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  app.env: "+base64.StdEncoding.EncodeToString(dotenv)+"\n"))
				_, err := mustNew(t, nil).DecryptObject(s)
				return err
			},
			is:   []error{ErrDecryptionFailed, ErrNoMatchingKey},
			want: `data["app.env"]: cannot recover`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if err == nil {
				t.Fatal("want an error")
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("error %q does not wrap %v", err, target)
				}
			}
			if tt.notIs != nil && errors.Is(err, tt.notIs) {
				t.Errorf("error %q wraps %v", err, tt.notIs)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secretValue) {
				t.Errorf("error leaks the plaintext: %q", err)
			}
			t.Log(err)
		})
	}
}

// TestOnlySecretKeys: keys SOPS would find on its own, in the environment
// and the home directory, are never used.
func TestOnlySecretKeys(t *testing.T) {
	ak := newAgeKey(t)
	doc := encryptAgeDoc(t, "DB_PASSWORD="+secretValue+"\n", FormatDotenv, ak.recipient, "")

	home := t.TempDir()
	keyFile := filepath.Join(home, "keys.txt")
	if err := os.MkdirAll(filepath.Join(home, ".config", "sops", "age"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{keyFile, filepath.Join(home, ".config", "sops", "age", "keys.txt")} {
		if err := os.WriteFile(p, []byte(ak.identity+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("SOPS_AGE_KEY", ak.identity)
	t.Setenv("SOPS_AGE_KEY_FILE", keyFile)
	t.Setenv("SOPS_AGE_KEY_CMD", "echo "+ak.identity)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))

	_, err := mustNew(t, map[string][]byte{"unrelated": []byte("x")}).Decrypt(doc, FormatDotenv)
	if !errors.Is(err, ErrNoMatchingKey) {
		t.Fatalf("decryption must not use the environment's key: got %v", err)
	}
	// The same key from the Secret works.
	plain, err := mustNew(t, map[string][]byte{"k.agekey": []byte(ak.identity)}).Decrypt(doc, FormatDotenv)
	if err != nil || !bytes.Contains(plain, []byte(secretValue)) {
		t.Fatalf("decryption with the Secret's key: %q, %v", plain, err)
	}
}

func TestEncryptYAML(t *testing.T) {
	ak, ak2 := newAgeKey(t), newAgeKey(t)
	out, err := EncryptYAML([]byte(plainSecret), []string{ak.recipient, ak2.recipient})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte(secretValue)) || bytes.Contains(out, []byte("aHVudGVyMi1wbGFpbnRleHQ=")) {
		t.Fatalf("ciphertext holds the plaintext:\n%s", out)
	}
	obj := object(t, out)
	if obj.GetName() != "db" || obj.GetNamespace() != "apps" || obj.GetKind() != "Secret" {
		t.Errorf("metadata must stay readable, got %s/%s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	}
	if re, _, _ := unstructured.NestedString(obj.Object, "sops", "encrypted_regex"); re != SecretEncryptedRegex {
		t.Errorf("encrypted_regex = %q", re)
	}
	// Either recipient decrypts, and a document SOPS wrote verifies its MAC.
	for _, k := range []ageKey{ak, ak2} {
		plain, err := mustNew(t, map[string][]byte{"k.agekey": []byte(k.identity)}).Decrypt(out, FormatYAML)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(object(t, []byte(plainSecret)).Object, object(t, plain).Object); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}

	for name, recipients := range map[string][]string{"none": nil, "not age": {"ssh-ed25519 AAAA"}} {
		if _, err := EncryptYAML([]byte(plainSecret), recipients); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := EncryptYAML(out, []string{ak.recipient}); err == nil {
		t.Error("encrypting an encrypted document: want an error")
	}
}

// TestConcurrentUse shares one Decryptor between goroutines, as parallel
// builds of one Kustomization's retries or a CLI might (run with -race).
func TestConcurrentUse(t *testing.T) {
	ak, pk := newAgeKey(t), newPGPKey(t)
	d := mustNew(t, map[string][]byte{"a.agekey": []byte(ak.identity), "p.asc": pk.armored})
	ageDoc, err := EncryptYAML([]byte(plainSecret), []string{ak.recipient})
	if err != nil {
		t.Fatal(err)
	}
	docs := [][]byte{ageDoc, encryptPGPDoc(t, plainSecret, FormatYAML, pk, SecretEncryptedRegex)}
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			got, err := d.DecryptObject(object(t, docs[i%2]))
			if err == nil && got.Object["stringData"].(map[string]any)["password"] != secretValue {
				err = errors.New("wrong plaintext")
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
