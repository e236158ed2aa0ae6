package kustomize

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const encryptedSecret = `apiVersion: v1
kind: Secret
metadata:
    name: db
    namespace: apps
type: Opaque
stringData:
    password: ENC[AES256_GCM,data:c2VjcmV0,iv:AAAAAAAAAAAAAAAAAAAAAA==,tag:BBBBBBBBBBBBBBBBBBBBBB==,type:str]
sops:
    age:
        - recipient: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
          enc: |
            -----BEGIN AGE ENCRYPTED FILE-----
            YWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOQ==
            -----END AGE ENCRYPTED FILE-----
    lastmodified: "2024-05-01T10:00:00Z"
    mac: ENC[AES256_GCM,data:bWFj,iv:CCCCCCCCCCCCCCCCCCCCCC==,tag:DDDDDDDDDDDDDDDDDDDDDD==,type:str]
    unencrypted_suffix: _unencrypted
    version: 3.8.1
`

const encryptedEnv = `DB_PASSWORD=ENC[AES256_GCM,data:aHVudGVyMg==,iv:EEEEEEEEEEEEEEEEEEEEEE==,tag:FFFFFFFFFFFFFFFFFFFFFF==,type:str]
sops_age__list_0__map_recipient=age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p
sops_lastmodified=2024-05-01T10:00:00Z
sops_mac=ENC[AES256_GCM,data:bWFj,iv:GGGGGGGGGGGGGGGGGGGGGG==,tag:HHHHHHHHHHHHHHHHHHHHHH==,type:str]
sops_version=3.8.1
`

func TestFindSOPSEncrypted(t *testing.T) {
	root := newRoot(t, map[string]string{
		"encrypted/kustomization.yaml": `resources: [secret.yaml]
secretGenerator:
- name: app-env
  namespace: apps
  envs: [app.env]
`,
		"encrypted/secret.yaml": encryptedSecret,
		"encrypted/app.env":     encryptedEnv,
		"ini/kustomization.yaml": `configMapGenerator:
- name: settings
  files: [settings.ini]
`,
		"ini/settings.ini": "[app]\npassword = ENC-looking-but-not\n[sops]\nmac = abc\nlastmodified = 2024-05-01T10:00:00Z\n",
		"plain/kustomization.yaml": `resources: [secret.yaml]
secretGenerator:
- name: app-env
  envs: [app.env]
configMapGenerator:
- name: sops-config
  files: [.sops.yaml, notes.json]
`,
		"plain/secret.yaml": `apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: notsops
  config: |
    sops:
      enabled: true
    mac: 00:11:22:33:44:55
`,
		"plain/app.env":    "SOPS_ENABLED=true\nMAC_ADDRESS=aa:bb\nsops=fine\n",
		"plain/.sops.yaml": "creation_rules:\n  - path_regex: .*.yaml\n    encrypted_regex: ^(data|stringData)$\n",
		"plain/notes.json": `{"sops": "we use sops", "lastmodified": "yesterday"}`,
	})

	t.Run("encrypted Secret and encrypted env file", func(t *testing.T) {
		// Build refuses this tree without a Decryptor, so the objects and
		// the access log are given explicitly.
		if _, err := Build(context.Background(), BuildOptions{Root: root, Path: "encrypted"}); !errors.Is(err, ErrDecryptionRequired) {
			t.Fatalf("Build: want ErrDecryptionRequired, got %v", err)
		}
		files := []string{"encrypted/app.env", "encrypted/kustomization.yaml", "encrypted/secret.yaml"}
		found, err := FindSOPSEncrypted(root, objectsFromYAML(t, encryptedSecret), files)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(found.Objects, "Secret/apps/db") {
			t.Errorf("encrypted Secret not reported: %+v", found)
		}
		if diff := cmp.Diff([]string{"encrypted/app.env", "encrypted/secret.yaml"}, found.Files); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
		onlyFiles, err := FindSOPSEncrypted(root, nil, files)
		if err != nil || !slices.Contains(onlyFiles.Files, "encrypted/app.env") {
			t.Errorf("env file not reported from the access log alone: %+v, %v", onlyFiles, err)
		}
	})

	t.Run("encrypted INI file", func(t *testing.T) {
		if _, err := Build(context.Background(), BuildOptions{Root: root, Path: "ini"}); !errors.Is(err, ErrDecryptionRequired) {
			t.Fatalf("Build: want ErrDecryptionRequired for the generated ConfigMap, got %v", err)
		}
		found, err := FindSOPSEncrypted(root, nil, []string{"ini/kustomization.yaml", "ini/settings.ini"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"ini/settings.ini"}, found.Files); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
	})

	t.Run("plaintext", func(t *testing.T) {
		res := mustBuild(t, BuildOptions{Root: root, Path: "plain"})
		found, err := FindSOPSEncrypted(root, res.Objects, res.Files)
		if err != nil {
			t.Fatal(err)
		}
		if !found.Empty() {
			t.Errorf("false positive: %+v", found)
		}
	})

	t.Run("file list stays confined", func(t *testing.T) {
		_, err := FindSOPSEncrypted(root, nil, []string{"../../etc/hostname"})
		if !errors.Is(err, ErrUnsafePath) {
			t.Errorf("want ErrUnsafePath, got %v", err)
		}
	})
}

func TestFindSOPSEncryptedDataValues(t *testing.T) {
	objs := objectsFromYAML(t,
		// A whole encrypted YAML document stored as a Secret value, stanza
		// and all, base64-encoded in data.
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: b64\ndata:\n  config.yaml: c29wczoKICBtYWM6IHh5egogIGxhc3Rtb2RpZmllZDogIjIwMjQiCmtleTogdmFsdWUK\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  config.yaml: \"sops: {}\\nkey: value\\n\"\n",
		"apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\nspec:\n  deep:\n  - token: ENC[AES256_GCM,data:eA==,iv:x,tag:y,type:str]\n",
	)
	found, err := FindSOPSEncrypted(t.TempDir(), objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Secret/b64", "Thing/t"}, found.Objects); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}
