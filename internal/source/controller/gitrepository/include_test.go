package gitrepository

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
	"github.com/weir-gitops/weir/internal/source/artifact"
)

// TestInclude copies another GitRepository's artifact into the checkout,
// and reports IncludeUnavailable while the included repository is missing.
func TestInclude(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "app.git")
	srv.InitRepo(t, "lib.git")
	appSHA := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"app.yaml": "app: 1\n"}, Message: "app"})
	libSHA := srv.Commit(t, "lib.git", gitserver.Commit{Files: map[string]string{"shared/base.yaml": "base: 1\n", "other.txt": "x"}, Message: "lib"})

	app := newRepo(ns, "app", srv.HTTPURL("app.git"), &sourcev1.GitRepositoryRef{Branch: "main"})
	app.Spec.Include = []sourcev1.GitRepositoryInclude{{
		GitRepositoryRef: meta.LocalObjectReference{Name: "lib"}, FromPath: "shared", ToPath: "vendor/lib",
	}}
	if err := env.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	ready := env.WaitForFailure(t, app, sourcev1.IncludeUnavailableCondition)
	if !conditions.IsTrue(app, sourcev1.IncludeUnavailableCondition) || ready.Message == "" {
		t.Errorf("IncludeUnavailable not reported: %+v", app.Status.Conditions)
	}

	lib := newRepo(ns, "lib", srv.HTTPURL("lib.git"), &sourcev1.GitRepositoryRef{Branch: "main"})
	if err := env.Client.Create(ctx, lib); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, lib, "main@sha1:"+libSHA)
	env.RequestReconcile(t, app)
	app = waitReady(t, env, app, "main@sha1:"+appSHA)
	if len(app.Status.IncludedArtifacts) != 1 || app.Status.IncludedArtifacts[0].Revision != "main@sha1:"+libSHA {
		t.Errorf("includedArtifacts = %+v", app.Status.IncludedArtifacts)
	}

	dir := t.TempDir()
	resp, err := http.Get(app.Status.Artifact.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := artifact.Untar(resp.Body, dir, 0); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]bool{"app.yaml": true, "vendor/lib/base.yaml": true, "vendor/lib/other.txt": false} {
		_, err := os.Stat(filepath.Join(dir, file))
		if (err == nil) != want {
			t.Errorf("%s in artifact: %v, want %v", file, err == nil, want)
		}
	}
}
