package bucket

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"

	"github.com/weir-gitops/weir/internal/devenv/testenv/cloudfake/gcpkms"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gcsserver"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// TestGCS lists, indexes and downloads from a GCS server with a service
// account's JSON key (exchanged at its token_uri) and with a token source
// (the cloud identity); another token is refused.
func TestGCS(t *testing.T) {
	ctx := context.Background()
	keys := gcpkms.New(t) // its token endpoint exchanges the JSON keys it makes
	const email = "reader@weir-project.iam.gserviceaccount.com"
	srv := gcsserver.New(t, func(token string) bool {
		who, ok := keys.Principal(token)
		return ok && who == email || token == "ya29.identity"
	})
	srv.CreateBucket("manifests")
	etags := map[string]string{
		"apps/a.yaml": srv.PutObject(t, "manifests", "apps/a.yaml", "a: 1\n"),
		"apps/b.md":   srv.PutObject(t, "manifests", "apps/b.md", "# b\n"),
	}
	srv.PutObject(t, "manifests", ".sourceignore", "*.md\n")
	srv.PutObject(t, "manifests", "other/c.yaml", "c: 1\n")

	for name, cfg := range map[string]GCSConfig{
		"json key": {ServiceAccountKey: keys.AddServiceAccount(t, email)},
		"identity": {Token: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.identity"})},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.Endpoint, cfg.Insecure = srv.Endpoint(), true
			c, err := NewGCS(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			l, err := c.List(ctx, "manifests", "apps/")
			if err != nil {
				t.Fatal(err)
			}
			if l.IgnoreFile == nil {
				t.Fatal("root .sourceignore not found outside the prefix")
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
			want := Index{"apps/a.yaml": {Key: "apps/a.yaml", ETag: etags["apps/a.yaml"], Size: 5}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("downloaded index (-want +got):\n%s", diff)
			}
			assertFiles(t, dir, map[string]string{"apps/a.yaml": "a: 1\n"})
			if exists, err := c.List(ctx, "absent", ""); err == nil || !strings.Contains(err.Error(), "bucket 'absent' not found") {
				t.Errorf("absent bucket: %+v, %v", exists, err)
			}
		})
	}

	c, err := NewGCS(ctx, GCSConfig{Endpoint: srv.Endpoint(), Insecure: true,
		Token: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.stranger"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(ctx, "manifests", ""); err == nil || !strings.Contains(err.Error(), "failed to confirm existence of 'manifests' bucket") {
		t.Errorf("a refused token: %v", err)
	}
}
