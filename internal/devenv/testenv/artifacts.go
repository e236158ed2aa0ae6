package testenv

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/runtime/events"
	"github.com/weir-gitops/weir/internal/runtime/reconcile"
	"github.com/weir-gitops/weir/internal/source"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// StartArtifactStorage opens an artifact store in a temporary directory and
// serves it on 127.0.0.1, as the source controller does; both go away when
// ctx ends.
func StartArtifactStorage(ctx context.Context) (*artifact.Storage, error) {
	dir, err := os.MkdirTemp("", "weir-storage-")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	storage, err := artifact.NewStorage(dir, l.Addr().String(), artifact.Options{})
	if err != nil {
		l.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	srv := &http.Server{Handler: artifact.NewServer(storage).Handler(), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(l) }()
	go func() {
		<-ctx.Done()
		srv.Close()
		os.RemoveAll(dir)
	}()
	return storage, nil
}

// StartManager builds a controller manager on env (no metrics or health
// listeners), lets setup register controllers, and runs it until ctx ends.
func StartManager(ctx context.Context, env *Env, setup func(ctrl.Manager) error) error {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if err := setup(mgr); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: manager: %v\n", err)
		}
	}()
	return nil
}

// DownloadArtifact fetches a over HTTP, checks its digest and size against
// the status, and returns the bytes.
func DownloadArtifact(t testing.TB, a *meta.Artifact) []byte {
	t.Helper()
	if a == nil {
		t.Fatal("no artifact")
	}
	resp, err := http.Get(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", a.URL, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	alg, _, err := artifact.ParseDigest(a.Digest)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := artifact.Digest(alg, bytes.NewReader(body)); err != nil || got != a.Digest {
		t.Errorf("downloaded digest %s, status says %s (%v)", got, a.Digest, err)
	}
	if a.Size == nil || *a.Size != int64(len(body)) {
		t.Errorf("downloaded %d bytes, status says %v", len(body), a.Size)
	}
	return body
}

// ArtifactFiles lists the regular files of a tar.gz artifact with their
// content.
func ArtifactFiles(t testing.TB, tgz []byte) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = string(data)
	}
}

// SourceDeps is what a source reconciler under test needs from mgr and
// storage: Kubernetes Events (no forwarding), Flux's default retention.
func SourceDeps(mgr ctrl.Manager, storage *artifact.Storage) source.Deps {
	return source.Deps{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Storage: storage,
		Events: events.NewRecorder(mgr.GetEventRecorderFor(meta.SourceControllerManager), mgr.GetScheme(), //nolint:staticcheck // SA1019: events.Recorder wraps the core/v1 record.EventRecorder; GetEventRecorder's events.k8s.io API has another signature
			meta.SourceControllerManager, "test", ""),
		RetentionRecords: 2, RetentionTTL: time.Minute,
	}
}

// FastQueue retries failures quickly, so failure-path tests converge in
// well under a second.
var FastQueue = reconcile.SetupOptions{MaxConcurrentReconciles: 4, MinRetryDelay: 100 * time.Millisecond, MaxRetryDelay: time.Second}
