package decrypt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/getsops/sops/v3/azkv"
	sopsgcpkms "github.com/getsops/sops/v3/gcpkms"
	"github.com/getsops/sops/v3/hcvault"
	"github.com/getsops/sops/v3/keys"
	"github.com/getsops/sops/v3/kms"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/awskms"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azurekv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpkms"
	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/vaulttransit"
)

const secretManifest = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: kms-protected-value\n"

// isolateAWS points the AWS SDK's KMS and STS clients at the fake
// (TestMain has already cut it off from the machine's identity).
func isolateAWS(t *testing.T, url string) {
	t.Setenv("AWS_ENDPOINT_URL_KMS", url)
	t.Setenv("AWS_ENDPOINT_URL_STS", url)
}

const testKeyARN = "arn:aws:kms:eu-west-1:123456789012:key/0f0e0d0c-weir-test"

func awsSecret(id, secret string) map[string][]byte {
	return map[string][]byte{AWSKMSKey: []byte("aws_access_key_id: " + id + "\naws_secret_access_key: " + secret + "\n")}
}

// encryptTo encrypts secretManifest to the master keys with the
// credentials of a decryption Secret, the way `sops -e` would.
func encryptTo(t *testing.T, creds map[string][]byte, group ...keys.MasterKey) []byte {
	t.Helper()
	enc, err := New(creds)
	if err != nil {
		t.Fatal(err)
	}
	out, err := enc.EncryptYAMLTo([]byte(secretManifest), group)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// decryptDoc decrypts doc and checks it holds secretManifest's value.
func decryptDoc(t *testing.T, d *Decryptor, doc []byte) error {
	t.Helper()
	plain, err := d.Decrypt(doc, FormatYAML)
	if err != nil {
		return err
	}
	if !strings.Contains(string(plain), "password: kms-protected-value") {
		t.Fatalf("decrypted document lacks the value:\n%s", plain)
	}
	return nil
}

func TestAWSKMSWithTheSecretsCredentials(t *testing.T) {
	fake := awskms.New(t)
	isolateAWS(t, fake.URL)
	fake.AddAccessKey("AKIAWEIRTEST", "aws-secret-never-shown")
	creds := awsSecret("AKIAWEIRTEST", "aws-secret-never-shown")
	v := "production"
	key := kms.NewMasterKey(testKeyARN, "", map[string]*string{"env": &v})
	doc := encryptTo(t, creds, key)
	if !strings.Contains(string(doc), "env: production") {
		t.Fatalf("the encryption context is not in the metadata:\n%s", doc)
	}

	d, err := New(creds)
	if err != nil {
		t.Fatal(err)
	}
	if err := decryptDoc(t, d, doc); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1]
	want := awskms.Request{Operation: "Decrypt", AccessKeyID: "AKIAWEIRTEST", Region: "eu-west-1", Service: "kms",
		KeyID: testKeyARN, Context: map[string]string{"env": "production"}, Status: 200}
	if last.Operation != want.Operation || last.AccessKeyID != want.AccessKeyID || last.Region != want.Region ||
		last.KeyID != want.KeyID || last.Context["env"] != "production" || last.Status != 200 {
		t.Errorf("KMS saw %+v, want %+v", last, want)
	}

	// Another context than the one encrypted with does not decrypt.
	altered := strings.Replace(string(doc), "env: production", "env: staging", 1)
	err = decryptDoc(t, d, []byte(altered))
	if err == nil || !strings.Contains(err.Error(), "InvalidCiphertextException") {
		t.Errorf("altered context: err = %v", err)
	}

	// Unknown or wrong credentials: the message names the service and
	// the key, never the secret.
	fake.AddAccessKey("AKIAOTHER", "the-right-secret")
	for id, want := range map[string]string{"AKIAUNKNOWN": "UnrecognizedClientException", "AKIAOTHER": "InvalidSignatureException"} {
		wrong, err := New(awsSecret(id, "other-secret-never-shown"))
		if err != nil {
			t.Fatal(err)
		}
		err = decryptDoc(t, wrong, doc)
		if err == nil || !errors.Is(err, ErrDecryptionFailed) {
			t.Fatalf("%s: err = %v, want a decryption failure", id, err)
		}
		for _, want := range []string{"awskms key " + testKeyARN, "AWS KMS", want} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("message %q lacks %q", err, want)
			}
		}
		if strings.Contains(err.Error(), "other-secret-never-shown") {
			t.Errorf("the secret leaked: %q", err)
		}
	}
}

func TestAWSKMSRoleAssumption(t *testing.T) {
	fake := awskms.New(t)
	isolateAWS(t, fake.URL)
	fake.AddAccessKey("AKIABASE", "base-secret")
	creds := awsSecret("AKIABASE", "base-secret")
	const role = "arn:aws:iam::123456789012:role/sops-decrypt"
	doc := encryptTo(t, creds, kms.NewMasterKeyFromArn(testKeyARN+"+"+role, nil, ""))
	if !strings.Contains(string(doc), "role: "+role) {
		t.Fatalf("no role in the metadata:\n%s", doc)
	}
	d, _ := New(creds)
	if err := decryptDoc(t, d, doc); err != nil {
		t.Fatal(err)
	}
	var assumed, decrypted *awskms.Request
	for _, r := range fake.Requests() {
		switch r.Operation {
		case "AssumeRole":
			assumed = &r
		case "Decrypt":
			decrypted = &r
		}
	}
	if assumed == nil || assumed.RoleARN != role || assumed.AccessKeyID != "AKIABASE" || !strings.HasPrefix(assumed.SessionName, "sops@") {
		t.Fatalf("AssumeRole = %+v", assumed)
	}
	if decrypted == nil || !strings.HasPrefix(decrypted.AccessKeyID, "ASIAFAKE") {
		t.Errorf("Decrypt was not made with the role's session: %+v", decrypted)
	}
}

func TestVaultTransitWithTheSecretsToken(t *testing.T) {
	fake := vaulttransit.New(t, "hvs.weir-test-token")
	key, err := hcvault.NewMasterKeyFromURI(fake.URL + "/v1/sops/keys/weir")
	if err != nil {
		t.Fatal(err)
	}
	creds := map[string][]byte{VaultTokenKey: []byte("hvs.weir-test-token\n")}
	doc := encryptTo(t, creds, key)
	if !strings.Contains(string(doc), "vault_address: "+fake.URL) {
		t.Fatalf("no vault_address in the metadata:\n%s", doc)
	}
	d, _ := New(creds)
	if err := decryptDoc(t, d, doc); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if last := reqs[len(reqs)-1]; last.Path != "/v1/sops/decrypt/weir" || last.Token != "hvs.weir-test-token" || last.Status != 200 {
		t.Errorf("Vault saw %+v", last)
	}

	wrong, _ := New(map[string][]byte{VaultTokenKey: []byte("hvs.wrong-token-never-shown")})
	err = decryptDoc(t, wrong, doc)
	if err == nil || !strings.Contains(err.Error(), "hcvault key "+fake.URL+"/sops/weir") ||
		!strings.Contains(err.Error(), "HashiCorp Vault transit") || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("wrong token: err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong-token-never-shown") {
		t.Errorf("the token leaked: %q", err)
	}

	// A Kustomization naming a ServiceAccount reaches no Vault without a
	// token in the Secret or a login (--sops-vault-configmap).
	obj, _ := New(nil, Options{ObjectLevel: "serviceaccount/apps/tenant"})
	err = decryptDoc(t, obj, doc)
	if err == nil || !strings.Contains(err.Error(), "object-level workload identity (serviceaccount/apps/tenant) for HashiCorp Vault transit needs the controller's --sops-vault-configmap to list the Vault address "+fake.URL) {
		t.Errorf("object level: err = %v", err)
	}
}

// TestVaultTokenPrecedence: Flux's order, sops.vault-token in the Secret,
// then the workload identity's login, then the controller's VAULT_TOKEN,
// which never stands in for an object-level identity.
func TestVaultTokenPrecedence(t *testing.T) {
	fake := vaulttransit.New(t, "hvs.secret-token", "hvs.login-token", "hvs.env-token")
	key, err := hcvault.NewMasterKeyFromURI(fake.URL + "/v1/sops/keys/weir")
	if err != nil {
		t.Fatal(err)
	}
	doc := encryptTo(t, map[string][]byte{VaultTokenKey: []byte("hvs.secret-token")}, key)
	var asked []string
	login := func(_ context.Context, address string) (string, error) {
		asked = append(asked, address)
		return "hvs.login-token", nil
	}
	notListed := func(_ context.Context, address string) (string, error) {
		return "", fmt.Errorf("Vault address '%s' is %w ConfigMap 'weir-system/sops-vault'", address, ErrVaultAddressNotListed)
	}
	tests := []struct {
		name      string
		secret    map[string][]byte
		opts      Options
		env       string
		wantToken string
		wantErr   string
		wantAsked int
	}{
		{name: "the Secret's token wins", secret: map[string][]byte{VaultTokenKey: []byte("hvs.secret-token")},
			opts: Options{Vault: login}, wantToken: "hvs.secret-token"},
		{name: "the login", opts: Options{Vault: login}, env: "hvs.env-token", wantToken: "hvs.login-token", wantAsked: 1},
		{name: "the login of an object-level identity", opts: Options{Vault: login, ObjectLevel: "serviceaccount/apps/tenant"},
			wantToken: "hvs.login-token", wantAsked: 1},
		{name: "not listed: the controller's VAULT_TOKEN", opts: Options{Vault: notListed}, env: "hvs.env-token", wantToken: "hvs.env-token"},
		{name: "not listed, no VAULT_TOKEN", opts: Options{Vault: notListed},
			wantErr: "Vault address '" + fake.URL + "' is not listed in --sops-vault-configmap ConfigMap 'weir-system/sops-vault'"},
		{name: "not listed, object level: never VAULT_TOKEN", opts: Options{Vault: notListed, ObjectLevel: "serviceaccount/apps/tenant"},
			env: "hvs.env-token", wantErr: "is not listed in --sops-vault-configmap"},
		{name: "no login: VAULT_TOKEN", env: "hvs.env-token", wantToken: "hvs.env-token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("VAULT_TOKEN", tt.env)
			asked = nil
			d, err := New(tt.secret, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			before := len(fake.Requests())
			err = decryptDoc(t, d, doc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hvs.") {
					t.Errorf("a token leaked: %q", err)
				}
				if n := len(fake.Requests()); n != before {
					t.Errorf("Vault was called %d times", n-before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			reqs := fake.Requests()
			if last := reqs[len(reqs)-1]; last.Token != tt.wantToken || last.Status != 200 {
				t.Errorf("Vault saw %+v, want token %s", last, tt.wantToken)
			}
			if len(asked) != tt.wantAsked || (len(asked) == 1 && asked[0] != fake.URL) {
				t.Errorf("login asked for %v, want %d times for %s", asked, tt.wantAsked, fake.URL)
			}
		})
	}
}

const testGCPKey = "projects/weir-test/locations/global/keyRings/sops/cryptoKeys/weir"

func TestGCPKMSWithTheSecretsServiceAccount(t *testing.T) {
	fake := gcpkms.New(t)
	t.Setenv(gcpkms.ClientTypeEnv, "rest")
	t.Setenv(gcpkms.EndpointEnv, fake.URL)
	creds := map[string][]byte{GCPKMSKey: fake.AddServiceAccount(t, "sops@weir-test.iam.gserviceaccount.com")}
	doc := encryptTo(t, creds, sopsgcpkms.NewMasterKeyFromResourceID(testGCPKey))
	d, _ := New(creds)
	if err := decryptDoc(t, d, doc); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if last := reqs[len(reqs)-1]; last.Operation != "decrypt" || last.Resource != testGCPKey ||
		last.Principal != "sops@weir-test.iam.gserviceaccount.com" || last.Status != 200 {
		t.Errorf("GCP KMS saw %+v", last)
	}

	other := gcpkms.New(t) // an account the fake's KMS does not know
	wrong, _ := New(map[string][]byte{GCPKMSKey: other.AddServiceAccount(t, "stranger@elsewhere.iam.gserviceaccount.com")})
	err := decryptDoc(t, wrong, doc)
	if err == nil || !strings.Contains(err.Error(), "gcpkms key "+testGCPKey) || !strings.Contains(err.Error(), "GCP KMS") {
		t.Errorf("unknown account: err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Errorf("the key leaked: %q", err)
	}
}

// TestAWSKMSWithTheControllersIdentity: a Secret without sops.aws-kms
// leaves the AWS SDK's default chain to find credentials, here the
// controller's environment.
func TestAWSKMSWithTheControllersIdentity(t *testing.T) {
	fake := awskms.New(t)
	isolateAWS(t, fake.URL)
	fake.AddAccessKey("AKIACONTROLLER", "controller-secret")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIACONTROLLER")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "controller-secret")
	doc := encryptTo(t, nil, kms.NewMasterKey(testKeyARN, "", nil))
	d, err := New(map[string][]byte{"other.agekey": []byte(newAgeKey(t).identity)})
	if err != nil {
		t.Fatal(err)
	}
	if err := decryptDoc(t, d, doc); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if last := reqs[len(reqs)-1]; last.Operation != "Decrypt" || last.AccessKeyID != "AKIACONTROLLER" {
		t.Errorf("KMS saw %+v, want the controller's key", last)
	}
}

func TestAzureCredentialShapes(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string // type of the credential
	}{
		{"client secret", `{"tenantId": "t", "clientId": "c", "clientSecret": "s3cr3t-azure"}`, "*azidentity.ClientSecretCredential"},
		{"az create-for-rbac output", "appId: c\ntenant: t\npassword: s3cr3t-azure\n", "*azidentity.ClientSecretCredential"},
		{"managed identity", `{"clientId": "c"}`, "*azidentity.ManagedIdentityCredential"},
		{"sovereign cloud", `{"tenantId": "t", "clientId": "c", "clientSecret": "s", "authorityHost": "https://login.microsoftonline.us/"}`, "*azidentity.ClientSecretCredential"},
		{"UTF-16 with a byte order mark", utf16LE(`{"clientId": "c"}`), "*azidentity.ManagedIdentityCredential"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(map[string][]byte{AzureKVKey: []byte(tt.doc)})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%T", d.server.cloud.azure); got != tt.want {
				t.Errorf("credential = %s, want %s", got, tt.want)
			}
		})
	}
	_, err := New(map[string][]byte{AzureKVKey: []byte(`{"tenantId": "t", "clientId": "c", "clientCertificate": "not a certificate", "clientCertificatePassword": "s3cr3t-azure"}`)})
	if err == nil || !strings.Contains(err.Error(), `data key "sops.azure-kv": clientCertificate cannot be parsed`) || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("bad certificate: err = %v", err)
	}
}

// utf16LE is s as PowerShell's Out-File writes it.
func utf16LE(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, r := range s {
		b = append(b, byte(r), 0)
	}
	return string(b)
}

func TestAzureKeyVaultWithTheSecretsClientSecret(t *testing.T) {
	fake := azurekv.New(t, map[string]string{"weir-app": "azure-secret-never-shown"})
	conf := func(secret string) map[string][]byte {
		return map[string][]byte{AzureKVKey: []byte(`{"tenantId": "` + azurekv.Tenant + `", "clientId": "weir-app", "clientSecret": "` +
			secret + `", "authorityHost": "` + fake.URL + `/"}`)}
	}
	via := Options{AzureTransport: fake.Client}
	author, err := New(conf("azure-secret-never-shown"), via)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := author.EncryptYAMLTo([]byte(secretManifest), []keys.MasterKey{azkv.NewMasterKey(fake.URL, "sops", "1")})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := New(conf("azure-secret-never-shown"), via)
	if err := decryptDoc(t, d, doc); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if last := reqs[len(reqs)-1]; last.Operation != "decrypt" || last.Key != "sops" || last.Client != "weir-app" || last.Status != 200 {
		t.Errorf("Key Vault saw %+v", last)
	}
	wrong, _ := New(conf("wrong-azure-secret"), via)
	err = decryptDoc(t, wrong, doc)
	if err == nil || !strings.Contains(err.Error(), "azurekv key "+fake.URL+"/keys/sops") || !strings.Contains(err.Error(), "Azure Key Vault") {
		t.Errorf("wrong secret: err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "wrong-azure-secret") {
		t.Errorf("the secret leaked: %q", err)
	}
}

// TestVaultRefusedTokens: transit refusing (403) a login's token is told
// to Options.VaultRefused and the call is made once more with the next
// token Options.Vault gives; a refused Secret or VAULT_TOKEN token, or
// an error other than 403, is not retried.
func TestVaultRefusedTokens(t *testing.T) {
	fake := vaulttransit.New(t, "hvs.author", "hvs.good")
	key, err := hcvault.NewMasterKeyFromURI(fake.URL + "/v1/sops/keys/weir")
	if err != nil {
		t.Fatal(err)
	}
	doc := encryptTo(t, map[string][]byte{VaultTokenKey: []byte("hvs.author")}, key)
	tests := []struct {
		name   string
		secret map[string][]byte
		env    string
		// logins are the tokens Options.Vault gives, in turn.
		logins      []string
		wantRefused []string
		wantErr     string
	}{
		{name: "a refused login token, a new login", logins: []string{"hvs.revoked", "hvs.good"}, wantRefused: []string{"hvs.revoked"}},
		{name: "refused twice", logins: []string{"hvs.revoked", "hvs.denied"}, wantRefused: []string{"hvs.revoked"},
			wantErr: "hcvault key " + fake.URL + "/sops/weir: HashiCorp Vault transit: permission denied (HTTP 403) twice, for the login's token and for a new login's"},
		{name: "the Secret's token is not retried", secret: map[string][]byte{VaultTokenKey: []byte("hvs.wrong")}, logins: []string{"hvs.good"},
			wantErr: "permission denied"},
		{name: "VAULT_TOKEN is not retried", env: "hvs.wrong", wantErr: "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("VAULT_TOKEN", tt.env)
			var refused []string
			opts := Options{VaultRefused: func(_ context.Context, address, token string) {
				if address != fake.URL {
					t.Errorf("refused for %s", address)
				}
				refused = append(refused, token)
			}}
			if tt.logins != nil {
				logins := tt.logins
				opts.Vault = func(context.Context, string) (string, error) {
					tok := logins[0]
					if len(logins) > 1 {
						logins = logins[1:]
					}
					return tok, nil
				}
			}
			d, err := New(tt.secret, opts)
			if err != nil {
				t.Fatal(err)
			}
			err = decryptDoc(t, d, doc)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "hvs.") {
				t.Errorf("a token leaked: %q", err)
			}
			if strings.Join(refused, ",") != strings.Join(tt.wantRefused, ",") {
				t.Errorf("refused %q, want %q", refused, tt.wantRefused)
			}
		})
	}
}
