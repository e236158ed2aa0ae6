package gitrepository

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
	"github.com/weir-gitops/weir/internal/runtime/conditions"
)

// TestSSHHostKeyIsChecked clones over SSH with a deploy key, then swaps the
// Secret's known_hosts for another server's: the host key mismatch must fail
// the fetch, never be accepted, and the artifact must stay.
func TestSSHHostKeyIsChecked(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	key := gitserver.GenerateClientKey(t)
	srv := gitserver.New(t, gitserver.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey}})
	other := gitserver.New(t, gitserver.Options{})
	srv.InitRepo(t, "app.git")
	sha := srv.Commit(t, "app.git", gitserver.Commit{Files: map[string]string{"a.yaml": "a: 1\n"}, Message: "first"})

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "ssh", Namespace: ns},
		Data: map[string][]byte{
			"identity": key.PrivateKeyPEM, "identity.pub": key.AuthorizedKey, "known_hosts": srv.KnownHosts(),
		},
	}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	obj := newRepo(ns, "app", srv.SSHURL("app.git"), &sourcev1.GitRepositoryRef{Branch: "main"})
	obj.Spec.SecretRef = &meta.LocalObjectReference{Name: "ssh"}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	obj = waitReady(t, env, obj, "main@sha1:"+sha)
	good := obj.Status.Artifact.Digest

	// known_hosts of another server, rewritten to this server's address.
	wrong := strings.Replace(string(other.KnownHosts()), hostOf(other.SSHURL("x")), hostOf(srv.SSHURL("x")), 1)
	secret.Data["known_hosts"] = []byte(wrong)
	if err := env.Client.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	env.RequestReconcile(t, obj)
	ready := env.WaitForFailure(t, obj, sourcev1.GitOperationFailedReason)
	if !strings.Contains(ready.Message, "host key") {
		t.Errorf("message %q does not name the host key", ready.Message)
	}
	if strings.Contains(ready.Message, "PRIVATE KEY") {
		t.Error("message leaks the private key")
	}
	if !conditions.IsTrue(obj, sourcev1.FetchFailedCondition) || obj.Status.Artifact.Digest != good {
		t.Error("FetchFailed not set or artifact changed")
	}
}

// hostOf returns "[127.0.0.1]:PORT" for ssh://git@127.0.0.1:PORT/...
func hostOf(sshURL string) string {
	rest := strings.TrimPrefix(sshURL, "ssh://git@")
	hostport, _, _ := strings.Cut(rest, "/")
	host, port, _ := strings.Cut(hostport, ":")
	return "[" + host + "]:" + port
}
