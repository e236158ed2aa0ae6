package dev

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/weir-gitops/weir/examples"
	"github.com/weir-gitops/weir/internal/devenv/gitserve"
)

// fleetRepo is the path of the example repository on the Git server.
const fleetRepo = "fleet.git"

// fleet is the example repository: a bare repository served over HTTP on
// 127.0.0.1, and a working clone of it under the dev directory that a
// person can edit and push from.
type fleet struct {
	server *gitserve.Server
	root   string // the served directory of bare repositories
	clone  string // the working clone, origin = URL()
}

// URL is the clone URL of the example repository.
func (f *fleet) URL() string { return f.server.URL(fleetRepo) }

// Head returns the revision of main on the server as Flux writes it:
// main@sha1:<sha>.
func (f *fleet) Head() (string, error) {
	out, err := git(filepath.Join(f.root, fleetRepo), gitserve.Env(filepath.Join(f.root, ".home")), "rev-parse", "refs/heads/main")
	if err != nil {
		return "", err
	}
	return "main@sha1:" + strings.TrimSpace(out), nil
}

// Close stops serving.
func (f *fleet) Close() error { return f.server.Close() }

// publishFleet writes the embedded example into dir/fleet, commits it,
// pushes the commit to the bare repository dir/git/fleet.git and serves
// that on 127.0.0.1. onPush is called after every push to the server.
func publishFleet(dir string, onPush func()) (_ *fleet, err error) {
	f := &fleet{root: filepath.Join(dir, "git"), clone: filepath.Join(dir, "fleet")}
	if err := gitserve.InitBare(f.root, fleetRepo); err != nil {
		return nil, err
	}
	f.server, err = gitserve.Start(gitserve.Options{
		Root: f.root,
		OnPush: func(repo string) {
			if repo == fleetRepo && onPush != nil {
				onPush()
			}
		},
	})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.server.Close()
		}
	}()
	if err := os.CopyFS(f.clone, examples.Fleet()); err != nil {
		return nil, fmt.Errorf("writing the example repository: %w", err)
	}
	// The clone is the user's: their git configuration applies to later
	// commits, but this first one carries a fixed identity so that it works
	// on a machine where git has none.
	env := append(os.Environ(),
		"GIT_AUTHOR_NAME=weir dev", "GIT_AUTHOR_EMAIL=dev@weir.invalid",
		"GIT_COMMITTER_NAME=weir dev", "GIT_COMMITTER_EMAIL=dev@weir.invalid",
	)
	if _, err := git(f.clone, env, "init", "--quiet", "--initial-branch=main"); err != nil {
		return nil, err
	}
	// So that the hint's `git commit` works on a machine where git has no
	// identity yet; a configured identity is left alone.
	if out, _ := git(f.clone, os.Environ(), "config", "user.email"); strings.TrimSpace(out) == "" {
		for _, kv := range [][2]string{{"user.name", "weir dev"}, {"user.email", "dev@weir.invalid"}} {
			if _, err := git(f.clone, env, "config", kv[0], kv[1]); err != nil {
				return nil, err
			}
		}
	}
	// The first push goes to the bare repository on disk, hooks off, so
	// that no proxy or hook of the user's configuration can get in the way;
	// origin is then the served URL, as if the clone had been pushed there.
	for _, args := range [][]string{
		{"add", "--all"},
		{"commit", "--quiet", "--no-gpg-sign", "--no-verify", "--message", "weir dev: example fleet"},
		{"push", "--quiet", "--no-verify", filepath.Join(f.root, fleetRepo), "main"},
		{"remote", "add", "origin", f.URL()},
		{"update-ref", "refs/remotes/origin/main", "HEAD"},
		{"branch", "--quiet", "--set-upstream-to=origin/main", "main"},
	} {
		if _, err := git(f.clone, env, args...); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// git runs the git command line in dir and returns its standard output.
func git(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.String(), nil
}
