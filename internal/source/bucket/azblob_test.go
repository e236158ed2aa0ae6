package bucket

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/google/go-cmp/cmp"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/azureblob"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

type staticToken string

func (s staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(s), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestAzure lists (over several pages), indexes and downloads a container
// with the account key (Shared Key, verified by the fake), a SAS token and
// a bearer token, each seen by the server as such; a wrong key is refused
// without the key in the message.
func TestAzure(t *testing.T) {
	ctx := context.Background()
	srv := azureblob.New(t, azureblob.Options{Tokens: []string{"entra-token"}, SASSignature: "c2lnbmF0dXJl", PageSize: 2})
	srv.CreateContainer("manifests")
	etags := map[string]string{}
	for k, v := range map[string]string{"apps/a.yaml": "a: 1\n", "apps/b.yaml": "b: 1\n", "apps/c.md": "# c\n", "other/d.yaml": "d\n"} {
		etags[k] = srv.PutBlob("manifests", k, v)
	}
	srv.PutBlob("manifests", ".sourceignore", "*.md\n")
	hexETag := func(k string) string { e := etags[k]; return AzureETag(&e) }
	for _, tt := range []struct {
		name   string
		secret map[string][]byte
		id     azcore.TokenCredential
		auth   string
	}{
		{name: "account key", secret: map[string][]byte{AzureAccountKey: []byte(srv.Key())}, auth: "sharedkey"},
		{name: "sas key", secret: map[string][]byte{AzureSASKey: []byte("?sv=2022-11-02&ss=b&srt=co&sp=rl&sig=c2lnbmF0dXJl")}, auth: "sas"},
		{name: "identity", id: staticToken("entra-token"), auth: "bearer entra-token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewAzure(AzureConfig{Endpoint: srv.Endpoint(), Insecure: true, SecretName: "az", Secret: tt.secret, Identity: tt.id})
			if err != nil {
				t.Fatal(err)
			}
			before := len(srv.Auths())
			l, err := c.List(ctx, "manifests", "apps/")
			if err != nil {
				t.Fatal(err)
			}
			if l.IgnoreFile == nil {
				t.Fatal("root .sourceignore not found")
			}
			text, err := c.ReadIgnoreFile(ctx, "manifests", *l.IgnoreFile)
			if err != nil {
				t.Fatal(err)
			}
			ix, err := NewIndex("manifests", l.Objects, artifact.NewFilterFromRules(artifact.IgnoreRules{Text: text}))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			got, err := c.Download(ctx, "manifests", ix, dir, DownloadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := Index{
				"apps/a.yaml": {Key: "apps/a.yaml", ETag: hexETag("apps/a.yaml"), Size: 5},
				"apps/b.yaml": {Key: "apps/b.yaml", ETag: hexETag("apps/b.yaml"), Size: 5},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("downloaded index (-want +got):\n%s", diff)
			}
			assertFiles(t, dir, map[string]string{"apps/a.yaml": "a: 1\n", "apps/b.yaml": "b: 1\n"})
			for _, a := range srv.Auths()[before:] {
				if a != tt.auth {
					t.Fatalf("a request authorized as %q, want %q", a, tt.auth)
				}
			}
			if _, err := c.List(ctx, "absent", ""); err == nil || !strings.Contains(err.Error(), "bucket 'absent' not found") {
				t.Errorf("absent container: %v", err)
			}
		})
	}

	wrong := "d3Jvbmcta2V5LXdyb25nLWtleQ=="
	c, err := NewAzure(AzureConfig{Endpoint: srv.Endpoint(), Insecure: true, SecretName: "az", Secret: map[string][]byte{AzureAccountKey: []byte(wrong)}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.List(ctx, "manifests", "")
	if err == nil || !strings.Contains(err.Error(), "AuthenticationFailed") || strings.Contains(err.Error(), wrong) {
		t.Errorf("wrong key: %v", err)
	}
}

func TestAzureSecretAndAccount(t *testing.T) {
	for _, tt := range []struct {
		data map[string][]byte
		ok   bool
	}{
		{map[string][]byte{AzureAccountKey: nil}, true},
		{map[string][]byte{AzureSASKey: nil}, true},
		{map[string][]byte{AzureClientID: nil}, true},
		{map[string][]byte{AzureTenantID: nil, AzureClientSecret: nil}, false},
		{map[string][]byte{"password": nil}, false},
	} {
		if err := AzureValidateSecret("az", tt.data); (err == nil) != tt.ok {
			t.Errorf("%v: %v", tt.data, err)
		}
	}
	for endpoint, want := range map[string]string{
		"https://acct.blob.core.windows.net":   "acct",
		"http://127.0.0.1:10000/devstoreacct1": "devstoreacct1",
		"https://localhost":                    "",
	} {
		got, err := AzureAccountName(endpoint)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("AzureAccountName(%q) = %q, %v", endpoint, got, err)
		}
	}
}
