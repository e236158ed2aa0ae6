package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/weir-gitops/weir/internal/cli/clitest"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// TestCreate drives `create source git` and `create kustomization` against
// live controllers: both wait for readiness and report the revision.
func TestCreate(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	srv := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "create.git")
	commit := srv.Commit(t, "create.git", gitserver.Commit{Files: manifests, Message: "first"})

	for _, s := range []struct {
		golden string
		args   []string
	}{
		{"create-source-git.golden", []string{"create", "source", "git", "fleet", "--url=" + srv.HTTPURL("create.git"), "--branch=main"}},
		{"create-ks.golden", []string{"create", "ks", "apps", "--source=GitRepository/fleet", "--path=./deploy", "--prune",
			"--target-namespace=" + ns}},
	} {
		res := clitest.Run(t, append(s.args, "-n", ns, "--timeout=1m")...)
		if res.Code != 0 {
			t.Fatalf("weir %s: exit %d\n%s", strings.Join(s.args, " "), res.Code, res.Output())
		}
		clitest.AssertGolden(t, s.golden, strings.ReplaceAll(res.Output(), commit, "COMMIT"), ns)
	}
	res := clitest.Run(t, "get", "ks", "apps", "-n", ns)
	if !strings.Contains(res.Stdout, "main@sha1:"+commit[:8]) {
		t.Errorf("get ks after create:\n%s", res.Output())
	}
}

// TestCreateSourceGitSSH creates a GitRepository over SSH with a key and
// known_hosts from files: the secret create makes lets the controller in.
func TestCreateSourceGitSSH(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	key := gitserver.GenerateClientKey(t)
	srv := gitserver.New(t, gitserver.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey}})
	srv.InitRepo(t, "ssh.git")
	commit := srv.Commit(t, "ssh.git", gitserver.Commit{Files: manifests, Message: "first"})
	dir := t.TempDir()
	keyFile, hostsFile := filepath.Join(dir, "identity"), filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(keyFile, key.PrivateKeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostsFile, srv.KnownHosts(), 0o600); err != nil {
		t.Fatal(err)
	}
	res := clitest.Run(t, "create", "source", "git", "fleet", "--url="+srv.SSHURL("ssh.git"), "--branch=main",
		"--private-key-file="+keyFile, "--known-hosts-file="+hostsFile, "--silent", "-n", ns, "--timeout=1m")
	if res.Code != 0 || !strings.Contains(res.Stderr, "✚ deploy key: "+strings.TrimSpace(string(key.AuthorizedKey))) ||
		!strings.Contains(res.Stderr, "✔ authentication configured\n") ||
		!strings.HasSuffix(res.Stderr, "✔ fetched revision: main@sha1:"+commit+"\n") {
		t.Errorf("create source git over SSH: exit %d\n%s", res.Code, res.Output())
	}
}
