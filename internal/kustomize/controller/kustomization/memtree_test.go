package kustomization

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// TestBuildInMemoryOrOnDisk: a small artifact of regular files is built
// from memory, one with a symbolic link from a directory; both apply the
// same way, and a missing spec.path reads the same from both.
func TestBuildInMemoryOrOnDisk(t *testing.T) {
	tests := []struct {
		name     string
		entries  []testenv.TarEntry
		wantDisk bool
	}{
		{name: "regular files in memory", entries: []testenv.TarEntry{
			{Name: "app/kustomization.yaml", Body: "resources: [cm.yaml]\n"},
			{Name: "app/cm.yaml", Body: configMapYAML("tree", "from", "memory")},
		}},
		{name: "a symbolic link on disk", wantDisk: true, entries: []testenv.TarEntry{
			{Name: "shared/cm.yaml", Body: configMapYAML("tree", "from", "disk")},
			{Name: "app/kustomization.yaml", Body: "resources: [cm.yaml]\n"},
			{Name: "app/cm.yaml", Link: "../shared/cm.yaml"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testenv.Get(t)
			ns := env.Namespace(t)
			repo := servedArtifact(t, env, ns, testenv.TarGz(t, tt.entries...))
			f := &fixture{t: t, env: env, ns: ns, repo: repo}
			memBefore, diskBefore := mainReconciler.trees.Fetched()

			k := f.kustomization("tree", "./app", nil)
			env.Create(t, k)
			f.waitApplied(k, repo.Status.Artifact.Revision)
			want := "memory"
			if tt.wantDisk {
				want = "disk"
			}
			if got := f.configMap("tree").Data["from"]; got != want {
				t.Errorf("applied data.from = %q, want %q", got, want)
			}
			mem, disk := mainReconciler.trees.Fetched()
			mem, disk = mem-memBefore, disk-diskBefore
			if tt.wantDisk && disk < 1 || !tt.wantDisk && mem < 1 {
				t.Errorf("fetches since: %d in memory, %d on disk; want the artifact on disk: %v", mem, disk, tt.wantDisk)
			}

			missing := f.kustomization("missing", "./app/nope", nil)
			env.Create(t, missing)
			ready := f.waitFailed(missing, "", meta.ArtifactFailedReason)
			if wantMsg := "kustomization path not found: stat app/nope: no such file or directory"; ready.Message != wantMsg {
				t.Errorf("message %q, want %q", ready.Message, wantMsg)
			}
		})
	}
}

// servedArtifact serves tgz on 127.0.0.1 and returns a suspended
// GitRepository in ns whose status advertises it.
func servedArtifact(t *testing.T, env *testenv.Env, ns string, tgz []byte) *sourcev1.GitRepository {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(tgz) }))
	t.Cleanup(srv.Close)
	digest, err := artifact.Digest(artifact.SHA256, bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	repo := newGitRepository(ns, "http://127.0.0.1:1/unused.git")
	repo.Spec.Suspend = true
	env.Create(t, repo)
	size := int64(len(tgz))
	a := &meta.Artifact{
		Path: "gitrepository/" + ns + "/fleet/artifact.tar.gz", URL: srv.URL + "/artifact.tar.gz",
		Revision: "main@sha1:" + strings.Repeat("ab", 20), Digest: digest, Size: &size, LastUpdateTime: metav1.Now(),
	}
	// The source controller may still be adding its finalizer.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(repo), repo); err != nil {
			return err
		}
		repo.Status.Artifact = a
		conditions.Set(repo, meta.ReadyCondition, metav1.ConditionTrue, meta.SucceededReason, "stored artifact")
		return env.Client.Status().Update(context.Background(), repo)
	})
	if err != nil {
		t.Fatal(err)
	}
	return repo
}
