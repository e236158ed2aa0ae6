package bootstrapcmd_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/cli/clitest"
	"github.com/weir-gitops/weir/internal/devenv/testenv"
	"github.com/weir-gitops/weir/internal/devenv/testenv/controllers"
	"github.com/weir-gitops/weir/internal/devenv/testenv/gitserver"
)

// A control plane with a kwok node, so that Deployments become ready, and
// without weir's CRDs: the first bootstrap installs them.
func TestMain(m *testing.M) {
	testenv.Main(m, func(o *testenv.Options) { o.SkipCRDs = true })
}

const (
	repo      = "org/fleet.git"
	systemDir = "clusters/dev/flux-system/"
	// featureGate is what seed 003 turns on with a patch of the
	// kustomize-controller Deployment's args.
	featureGate = "--feature-gates=StrictPostBuildSubstitutions=true"
)

// TestBootstrap follows one cluster through the bootstraps a team makes:
// over HTTPS into an empty repository, the same again (nothing to do), a
// user's patch pushed to flux-system/kustomization.yaml, a broken
// kustomization.yaml, the move to SSH with an agent and a generated deploy
// key, and an SSH private key given on the command line.
func TestBootstrap(t *testing.T) {
	ctx := context.Background()
	userKey := newAgentKey(t)
	srv := gitserver.New(t, gitserver.Options{
		Username: "git", Password: "s3cret", TLS: true,
		AuthorizedKeys: []ssh.PublicKey{userKey.public},
	})
	srv.InitRepo(t, repo)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, srv.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	runControllers(t)

	https := []string{"bootstrap", "git", "--url=" + srv.HTTPURL(repo), "--branch=main", "--path=clusters/dev",
		"--token-auth", "--username=git", "--password=s3cret", "--ca-file=" + caFile,
		"--interval=1s", "--author-email=flux@example.com", "--silent",
		"--registry-creds=bot:t0ken", "--image-pull-secret=regcred", "--sparse-checkout=clusters"}

	// 1. An empty repository: one commit, components installed, the
	// cluster at that commit.
	start := time.Now()
	res := clitest.Run(t, https...)
	if res.Code != 0 {
		t.Fatalf("first bootstrap: exit %d\n%s", res.Code, res.Output())
	}
	t.Logf("first bootstrap: %s", time.Since(start).Round(time.Millisecond))
	head := branchHead(t, srv)
	for _, want := range []string{"branch \"main\" does not exist yet", "committed component manifests to \"main\"",
		"installing components in \"flux-system\" namespace", "applying sync manifests",
		"kustomize-controller: deployment ready", "all components are healthy", "bootstrap finished"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("first bootstrap did not print %q:\n%s", want, res.Stderr)
		}
	}
	if strings.Contains(res.Stderr, "s3cret") || strings.Contains(res.Stderr, "t0ken") {
		t.Errorf("the password was printed:\n%s", res.Stderr)
	}
	for _, f := range []string{"gotk-components.yaml", "gotk-sync.yaml", "kustomization.yaml"} {
		if show(t, srv, "main:"+systemDir+f) == "" {
			t.Errorf("%s%s was not committed", systemDir, f)
		}
	}
	if msg := show(t, srv, "-s", "--format=%s%n%an <%ae>", "main"); !strings.Contains(msg, "Add weir ") ||
		!strings.Contains(msg, "Flux <flux@example.com>") {
		t.Errorf("commit message and author: %q", msg)
	}
	assertSynced(t, "main@sha1:"+head)
	var secret corev1.Secret
	mustGet(t, "regcred", &secret)
	if secret.Type != corev1.SecretTypeDockerConfigJson || !strings.Contains(string(secret.Data[".dockerconfigjson"]), `"ghcr.io"`) {
		t.Errorf("image pull secret: type %s, %s", secret.Type, secret.Data[".dockerconfigjson"])
	}
	var deployment appsv1.Deployment
	mustGet(t, "source-controller", &deployment)
	if ps := deployment.Spec.Template.Spec.ImagePullSecrets; len(ps) != 1 || ps[0].Name != "regcred" {
		t.Errorf("source-controller pulls with %v, want regcred", ps)
	}
	var syncRepo sourcev1.GitRepository
	mustGet(t, "flux-system", &syncRepo)
	if !slices.Equal(syncRepo.Spec.SparseCheckout, []string{"clusters"}) {
		t.Errorf("GitRepository sparseCheckout %v", syncRepo.Spec.SparseCheckout)
	}
	mustGet(t, "flux-system", &secret)
	if string(secret.Data["password"]) != "s3cret" || !bytes.Equal(secret.Data["ca.crt"], srv.CAPEM()) {
		t.Errorf("source secret holds %v", slices.Sorted(maps.Keys(secret.Data)))
	}

	// 2. The same again: no commit, no imperative apply. A change the
	// CLI's apply would undo (replicas, owned by field manager "flux")
	// stays.
	scale(t, "source-controller", 3)
	start = time.Now()
	res = clitest.Run(t, https...)
	t.Logf("second bootstrap (nothing to do): %s", time.Since(start).Round(time.Millisecond))
	if res.Code != 0 {
		t.Fatalf("second bootstrap: exit %d\n%s", res.Code, res.Output())
	}
	if !strings.Contains(res.Stderr, "component manifests are up to date") || strings.Contains(res.Stderr, "installing components") ||
		strings.Contains(res.Stderr, "applying source secret") {
		t.Errorf("second bootstrap did work:\n%s", res.Stderr)
	}
	if got := branchHead(t, srv); got != head {
		t.Errorf("second bootstrap committed %s", got)
	}
	if r := replicas(t, "source-controller"); r != 3 {
		t.Errorf("second bootstrap applied the components: replicas %d, want the 3 set by hand", r)
	}
	scale(t, "source-controller", 1)

	// 3. A user's patch, pushed alone, reaches the controller Deployment
	// through the in-cluster reconcile.
	kustomization := show(t, srv, "main:"+systemDir+"kustomization.yaml")
	patched := kustomization + `patches:
- target:
    kind: Deployment
    name: kustomize-controller
  patch: |
    - op: add
      path: /spec/template/spec/containers/0/args/-
      value: ` + featureGate + "\n"
	srv.Commit(t, repo, gitserver.Commit{Files: map[string]string{systemDir + "kustomization.yaml": patched}, Message: "Turn on strict substitutions"})
	head = branchHead(t, srv)
	start = time.Now()
	testenv.Eventually(t, 60*time.Second, func(_ context.Context) (bool, string) {
		args := controllerArgs(t, "kustomize-controller")
		return slices.Contains(args, featureGate), "kustomize-controller args: " + strings.Join(args, " ")
	})
	t.Logf("pushed patch reached the Deployment in %s", time.Since(start).Round(time.Millisecond))
	assertSynced(t, "main@sha1:"+head)

	// 4. Bootstrap again: the patch survives, nothing is committed.
	res = clitest.Run(t, https...)
	if res.Code != 0 {
		t.Fatalf("bootstrap after the patch: exit %d\n%s", res.Code, res.Output())
	}
	if got := branchHead(t, srv); got != head {
		t.Errorf("bootstrap after the patch committed %s", got)
	}
	if got := show(t, srv, "main:"+systemDir+"kustomization.yaml"); got != patched {
		t.Errorf("kustomization.yaml changed:\n%s", got)
	}
	if !slices.Contains(controllerArgs(t, "kustomize-controller"), featureGate) {
		t.Errorf("the feature gate is gone after bootstrap")
	}

	// 5. check sees a bootstrapped installation; install refuses it.
	res = clitest.Run(t, "check")
	if res.Code != 0 || !strings.Contains(res.Stderr, "bootstrapped: true") {
		t.Errorf("check after bootstrap: exit %d\n%s", res.Code, res.Stderr)
	}
	res = clitest.Run(t, "install")
	if res.Code != 1 || !strings.Contains(res.Stderr, "already been bootstrapped with weir") {
		t.Errorf("install on a bootstrapped cluster: exit %d\n%s", res.Code, res.Stderr)
	}

	// 6. A kustomization.yaml that does not build fails bootstrap before
	// anything is pushed or applied.
	srv.Commit(t, repo, gitserver.Commit{Files: map[string]string{systemDir + "kustomization.yaml": patched + "resources: [missing.yaml]\n"}})
	broken := branchHead(t, srv)
	res = clitest.Run(t, append(slices.Clone(https), "--components-extra=image-reflector-controller")...)
	if res.Code != 1 || !strings.Contains(res.Stderr, "building clusters/dev/flux-system") {
		t.Errorf("bootstrap with a broken kustomization.yaml: exit %d\n%s", res.Code, res.Stderr)
	}
	if got := branchHead(t, srv); got != broken {
		t.Errorf("bootstrap pushed %s on top of a broken kustomization.yaml", got)
	}
	srv.Commit(t, repo, gitserver.Commit{Files: map[string]string{systemDir + "kustomization.yaml": patched}})

	// 7. Wrong credentials: a clear error, the password nowhere.
	res = clitest.Run(t, append(slices.Clone(https[:len(https)-1]), "--password=wrong", "--silent")...)
	if res.Code != 1 || strings.Contains(res.Stderr, "wrong") || !strings.Contains(res.Stderr, "failed to clone repository") {
		t.Errorf("bootstrap with a wrong password: exit %d\n%s", res.Code, res.Stderr)
	}

	// 8. Move to SSH: the CLI pushes with the agent's key; the cluster gets
	// a generated deploy key, printed and confirmed, and the host key the
	// CLI saw on first contact.
	t.Setenv("SSH_AUTH_SOCK", userKey.socket)
	sshArgs := []string{"bootstrap", "git", "--url=" + srv.SSHURL(repo), "--branch=main", "--path=clusters/dev",
		"--interval=1s", "--author-email=flux@example.com"}
	signingKey := filepath.Join(t.TempDir(), "signing")
	if err := os.WriteFile(signingKey, userKey.privatePEM, 0o600); err != nil {
		t.Fatal(err)
	}
	stderr := &clitest.Buffer{}
	answer := &answerAfter{out: stderr, prompt: "Please give the key access to your repository", answer: "y\n",
		before: func(out string) error { return authorizePrintedKey(srv, out) }}
	// The race of a move, made certain: the GitRepository is held
	// suspended until the Kustomization, still at the HTTPS commit, has
	// applied the HTTPS address over the SSH one bootstrap applied. It
	// must still fetch the new commit from there (CI lost this race and
	// waited 5 minutes).
	suspendSync(t, true)
	reverted := make(chan bool, 1)
	go func() {
		reverted <- awaitRevert(testenv.Get(t).Client, srv.SSHURL(repo), srv.HTTPURL(repo))
		suspendSync(t, false)
	}()
	start = time.Now()
	res = clitest.RunReader(ctx, t, answer, nil, stderr, append(slices.Clone(sshArgs), "--ssh-signing-key-file="+signingKey)...)
	t.Logf("move to ssh (new commit, new secret, applied sync objects): %s", time.Since(start).Round(time.Millisecond))
	if !<-reverted {
		t.Errorf("the Kustomization did not apply the HTTPS GitRepository again during the move")
	}
	if res.Code != 0 {
		t.Fatalf("bootstrap over ssh: exit %d\n%s", res.Code, res.Output())
	}
	for _, want := range []string{"host key: [127.0.0.1]:", "public key: ecdsa-sha2-nistp384 ", "applying source secret",
		"committed component manifests", "removing the previous credentials from source secret"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("bootstrap over ssh did not print %q:\n%s", want, res.Stderr)
		}
	}
	head = branchHead(t, srv)
	assertSynced(t, "main@sha1:"+head)
	// The commit is signed with --ssh-signing-key-file, as git checks it.
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	if err := os.WriteFile(allowed, []byte("flux@example.com "+string(ssh.MarshalAuthorizedKey(userKey.public))), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := gitCommand(t, srv, "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", "main"); err != nil {
		t.Errorf("git verify-commit: %v\n%s", err, out)
	}
	mustGet(t, "flux-system", &secret)
	if _, ok := secret.Data["password"]; ok || len(secret.Data["identity"]) == 0 || len(secret.Data["known_hosts"]) == 0 {
		t.Errorf("ssh source secret holds %v", slices.Sorted(maps.Keys(secret.Data)))
	}
	if !bytes.Equal(knownHostKey(t, secret.Data["known_hosts"]), srv.HostKey().Marshal()) {
		t.Errorf("known_hosts %q is not the server's host key", secret.Data["known_hosts"])
	}
	var gitRepo sourcev1.GitRepository
	mustGet(t, "flux-system", &gitRepo)
	if gitRepo.Spec.URL != srv.SSHURL(repo) {
		t.Errorf("GitRepository URL %s", gitRepo.Spec.URL)
	}

	// 9. A private key given on the command line replaces the deploy key;
	// nothing to commit, the cluster fetches again with the new key.
	keyFile := filepath.Join(t.TempDir(), "id")
	if err := os.WriteFile(keyFile, userKey.privatePEM, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSH_AUTH_SOCK", "")
	res = clitest.Run(t, append(slices.Clone(sshArgs), "--private-key-file="+keyFile, "--silent")...)
	if res.Code != 0 {
		t.Fatalf("bootstrap with --private-key-file: exit %d\n%s", res.Code, res.Output())
	}
	if got := branchHead(t, srv); got != head {
		t.Errorf("bootstrap with --private-key-file committed %s", got)
	}
	mustGet(t, "flux-system", &secret)
	if !bytes.Equal(secret.Data["identity"], userKey.privatePEM) {
		t.Errorf("the source secret does not hold --private-key-file")
	}

	// 10. An unknown --ssh-hostkey-algos is refused before anything is
	// done. --ssh-hostname: the cluster fetches from another name of the
	// server (the CLI still pushes to --url): the GitRepository's URL
	// and the Secret's known_hosts follow it, and the cluster syncs the
	// commit that changed gotk-sync.yaml through it.
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.SSHURL(repo), "ssh://git@"), ":")
	port, _, _ = strings.Cut(port, "/")
	hostname := "localhost:" + port
	res = clitest.Run(t, append(slices.Clone(sshArgs), "--private-key-file="+keyFile, "--silent", "--ssh-hostkey-algos=ssh-dss2")...)
	if res.Code == 0 || !strings.Contains(res.Stderr, `--ssh-hostkey-algos: unsupported host key algorithm "ssh-dss2"`) {
		t.Errorf("bootstrap with an unknown --ssh-hostkey-algos: exit %d\n%s", res.Code, res.Output())
	}
	// --ssh-hostkey-algos: the CLI offers only the server's algorithm
	// (ed25519), when it scans the new host's keys and when it pushes.
	res = clitest.Run(t, append(slices.Clone(sshArgs), "--private-key-file="+keyFile, "--silent", "--ssh-hostname="+hostname,
		"--ssh-hostkey-algos=ssh-ed25519")...)
	if res.Code != 0 {
		t.Fatalf("bootstrap with --ssh-hostname: exit %d\n%s", res.Code, res.Output())
	}
	if !strings.Contains(res.Stderr, "collecting the SSH host key of "+hostname) {
		t.Errorf("bootstrap with --ssh-hostname did not collect the keys of %s:\n%s", hostname, res.Stderr)
	}
	mustGet(t, "flux-system", &gitRepo)
	if want := "ssh://git@" + hostname + "/" + repo; gitRepo.Spec.URL != want {
		t.Errorf("GitRepository URL %s, want %s", gitRepo.Spec.URL, want)
	}
	mustGet(t, "flux-system", &secret)
	if !strings.HasPrefix(string(secret.Data["known_hosts"]), "[localhost]:"+port+" ") {
		t.Errorf("known_hosts of the source secret:\n%s", secret.Data["known_hosts"])
	}
	assertSynced(t, "main@sha1:"+branchHead(t, srv))
}

// assertSynced checks the sync objects are Ready at revision.
func assertSynced(t *testing.T, revision string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func(_ context.Context) (bool, string) {
		var repo sourcev1.GitRepository
		var ks kustomizev1.Kustomization
		mustGet(t, "flux-system", &repo)
		mustGet(t, "flux-system", &ks)
		got := ""
		if repo.Status.Artifact != nil {
			got = repo.Status.Artifact.Revision
		}
		return got == revision && ks.Status.LastAppliedRevision == revision,
			"artifact " + got + ", applied " + ks.Status.LastAppliedRevision + ", want " + revision
	})
}

// mustGet reads the named object from flux-system, where bootstrap installs.
func mustGet(t *testing.T, name string, obj client.Object) {
	t.Helper()
	const ns = "flux-system"
	if err := testenv.Get(t).Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatalf("get %T %s/%s: %v", obj, ns, name, err)
	}
}

// scale sets a Deployment's replicas as another user would, with a field
// manager of its own.
func scale(t *testing.T, name string, n int) {
	t.Helper()
	d := &appsv1.Deployment{}
	d.Namespace, d.Name = "flux-system", name
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":`+string(rune('0'+n))+`}}`))
	if err := testenv.Get(t).Client.Patch(context.Background(), d, patch, client.FieldOwner("test")); err != nil {
		t.Fatal(err)
	}
}

// suspendSync suspends or resumes the GitRepository flux-system with a
// field manager of its own, which bootstrap's and the Kustomization's
// applies leave alone.
func suspendSync(t *testing.T, suspend bool) {
	repo := &sourcev1.GitRepository{}
	repo.Namespace, repo.Name = "flux-system", "flux-system"
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"suspend":`+strconv.FormatBool(suspend)+`}}`))
	if err := testenv.Get(t).Client.Patch(context.Background(), repo, patch, client.FieldOwner("test")); err != nil {
		t.Error(err)
	}
}

// awaitRevert waits until the GitRepository flux-system has had the URL
// to and then from again, and reports whether it saw both within a
// minute.
func awaitRevert(c client.Client, to, from string) bool {
	want := to
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var repo sourcev1.GitRepository
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: "flux-system", Name: "flux-system"}, &repo); err != nil {
			continue
		}
		switch {
		case repo.Spec.URL == want && want == from:
			return true
		case repo.Spec.URL == want:
			want = from
		}
	}
	return false
}

func replicas(t *testing.T, name string) int32 {
	t.Helper()
	var d appsv1.Deployment
	mustGet(t, name, &d)
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func controllerArgs(t *testing.T, name string) []string {
	t.Helper()
	var d appsv1.Deployment
	mustGet(t, name, &d)
	return d.Spec.Template.Spec.Containers[0].Args
}

// git runs the git command line on the server's bare repository and
// returns its output, or "" when it fails.
func git(t *testing.T, srv *gitserver.Server, args ...string) string {
	t.Helper()
	out, err := gitCommand(t, srv, args...)
	if err != nil {
		return ""
	}
	return out
}

func gitCommand(t *testing.T, srv *gitserver.Server, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", filepath.Join(srv.Dir(), repo)}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func branchHead(t *testing.T, srv *gitserver.Server) string {
	t.Helper()
	return strings.TrimSpace(git(t, srv, "rev-parse", "main"))
}

func show(t *testing.T, srv *gitserver.Server, args ...string) string {
	t.Helper()
	return git(t, srv, append([]string{"show"}, args...)...)
}

// runControllers runs weir's source and kustomize controllers in the test
// process once bootstrap has created the source-controller Deployment,
// standing in for the pods kwok only pretends to run.
func runControllers(t *testing.T) {
	t.Helper()
	controllers.Run(t, controllers.Options{
		Controllers: []string{"source", "kustomize"},
		Deployment:  client.ObjectKey{Namespace: "flux-system", Name: "source-controller"},
	})
}

// agentKey is a user's key held by an SSH agent listening on socket.
type agentKey struct {
	public     ssh.PublicKey
	privatePEM []byte
	socket     string
}

func newAgentKey(t *testing.T) agentKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "agent.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { defer conn.Close(); _ = agent.ServeAgent(keyring, conn) })
		}
	})
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	return agentKey{public: sshPub, privatePEM: pemEncode(block), socket: socket}
}

// answerAfter is stdin for a prompt: it waits until out shows prompt, runs
// before with what was printed so far, then reads as answer.
type answerAfter struct {
	out    *clitest.Buffer
	prompt string
	answer string
	before func(out string) error
	r      io.Reader
}

func (a *answerAfter) Read(p []byte) (int, error) {
	if a.r == nil {
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(a.out.String(), a.prompt) {
			if time.Now().After(deadline) {
				return 0, errors.New("the prompt never came")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := a.before(a.out.String()); err != nil {
			return 0, err
		}
		a.r = strings.NewReader(a.answer)
	}
	return a.r.Read(p)
}

// authorizePrintedKey lets the deploy key bootstrap printed read srv, as a
// user would on their Git host.
func authorizePrintedKey(srv *gitserver.Server, out string) error {
	_, after, ok := strings.Cut(out, "public key: ")
	if !ok {
		return errors.New("no public key printed")
	}
	line, _, _ := strings.Cut(after, "\n")
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil {
		return err
	}
	srv.AuthorizeKey(key)
	return nil
}

func knownHostKey(t *testing.T, knownHosts []byte) []byte {
	t.Helper()
	_, _, key, _, _, err := ssh.ParseKnownHosts(knownHosts)
	if err != nil {
		t.Fatalf("known_hosts: %v", err)
	}
	return key.Marshal()
}

func pemEncode(b *pem.Block) []byte { return pem.EncodeToMemory(b) }
