package artifact

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestFetcher(t *testing.T) {
	tgz := makeTar(t, true, reg("deploy/app.yaml", "kind: ConfigMap\n"))
	digest, err := Digest(SHA256, bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	var failures atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok.tar.gz":
			_, _ = w.Write(tgz)
		case "/flaky.tar.gz":
			if failures.Add(1) == 1 {
				http.Error(w, "try again", http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write(tgz)
		case "/tampered.tar.gz":
			_, _ = w.Write(append(bytes.Clone(tgz), 0))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	tests := []struct {
		name    string
		fetcher Fetcher
		path    string
		wantErr error
		errText string
	}{
		{name: "extracts a verified artifact", path: "/ok.tar.gz"},
		{name: "retries a failed request", fetcher: Fetcher{Retries: 1}, path: "/flaky.tar.gz"},
		{name: "a 404 is not found", fetcher: Fetcher{Retries: 3}, path: "/gone.tar.gz", wantErr: ErrArtifactNotFound},
		{name: "a digest mismatch extracts nothing", path: "/tampered.tar.gz", wantErr: ErrDigestMismatch, errText: "expected '" + digest + "'"},
		{name: "a download over the bound stops", fetcher: Fetcher{MaxDownloadSize: 16}, path: "/ok.tar.gz", wantErr: ErrArchiveTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			tt.fetcher.TempDir = t.TempDir()
			err := tt.fetcher.Fetch(context.Background(), srv.URL+tt.path, digest, dir)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(dir, "deploy", "app.yaml"))
				if err != nil || string(got) != "kind: ConfigMap\n" {
					t.Fatalf("extracted %q, %v", got, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errText) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.wantErr, tt.errText)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("a failed fetch left %s behind", dir)
			}
			if left, _ := os.ReadDir(tt.fetcher.TempDir); len(left) != 0 {
				t.Errorf("a failed fetch left %d temporary files", len(left))
			}
		})
	}
}
