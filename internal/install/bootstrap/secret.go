package bootstrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"time"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/internal/install"
	"github.com/weir-gitops/weir/internal/source/git"
	"github.com/weir-gitops/weir/internal/source/sshkey"
)

// secretState is the source Secret as bootstrap found it.
type secretState struct {
	exists bool
	data   map[string][]byte
}

// readSourceSecret reads the source Secret, if the cluster has one: a
// re-run keeps its deploy key and trusts its known_hosts.
func (r *runner) readSourceSecret(ctx context.Context) error {
	var s corev1.Secret
	err := r.kube.Get(ctx, client.ObjectKey{Namespace: r.o.Components.Namespace, Name: r.o.SecretName}, &s)
	switch {
	case apierrors.IsNotFound(err):
		r.secret = &secretState{}
		return nil
	case err != nil:
		return fmt.Errorf("reading source secret %s/%s: %w", r.o.Components.Namespace, r.o.SecretName, err)
	}
	r.secret = &secretState{exists: true, data: s.Data}
	return nil
}

// connect builds the credentials the CLI clones and pushes with. For SSH
// the host key comes from the existing Secret's known_hosts or, the first
// time, from the server itself (trust on first use, printed so that the
// user can check it).
func (r *runner) connect(ctx context.Context) error {
	if r.o.scheme() != "ssh" {
		data := map[string][]byte{git.SecretUsername: []byte(r.o.Username), git.SecretPassword: []byte(r.o.Password)}
		if len(r.o.CA) > 0 {
			data[git.SecretCA] = r.o.CA
		}
		auth, err := git.NewAuth(r.o.URL, data)
		if err != nil {
			return err
		}
		r.auth = auth
		return nil
	}
	// The Secret's known_hosts when it knows this server: a changed key is
	// then refused. A new server (first run, or a move to another host)
	// is asked for its key.
	hosts, err := r.hostKeys(ctx, r.o.URL)
	if err != nil {
		return err
	}
	// The cluster's known_hosts are those of the host it fetches from.
	r.knownHosts = hosts
	if sync := r.o.syncURL(); sync != r.o.URL {
		if r.knownHosts, err = r.hostKeys(ctx, sync); err != nil {
			return err
		}
	}
	r.knownHosts = keepPreviousHosts(r.knownHosts, r.secret.data[git.SecretKnownHosts])
	switch {
	case r.o.Clone != nil:
		// The CLI goes through HTTPS; the SSH address is the cluster's.
		data := map[string][]byte{git.SecretUsername: []byte(r.o.Clone.Username), git.SecretPassword: []byte(r.o.Clone.Password)}
		if len(r.o.CA) > 0 {
			data[git.SecretCA] = r.o.CA
		}
		r.auth, err = git.NewAuth(r.o.Clone.URL, data)
	case len(r.o.PrivateKey) > 0:
		data := map[string][]byte{git.SecretIdentity: r.o.PrivateKey, git.SecretKnownHosts: hosts}
		if r.o.Password != "" {
			data[git.SecretPassword] = []byte(r.o.Password)
		}
		r.auth, err = git.NewAuth(r.o.URL, data)
	case r.o.SSHAgentSocket != "":
		r.auth, err = git.NewAgentAuth(r.o.URL, hosts, r.o.SSHAgentSocket)
	default:
		err = errors.New("pushing over ssh needs --private-key-file, or an SSH agent (SSH_AUTH_SOCK) holding a key with write access")
	}
	if err == nil {
		r.auth.HostKeyAlgorithms = r.o.SSHHostKeyAlgos
	}
	return err
}

// keepPreviousHosts appends the source Secret's known_hosts lines to the
// new ones when the cluster moves to another address (--ssh-hostname, a
// new URL): the Secret is applied before the sync manifests that move the
// GitRepository, and until the cluster has applied them (its Kustomization
// puts the old URL back from the last revision it applied) it fetches from
// the old address, which must still be trusted, or it never fetches the
// commit that moves it.
func keepPreviousHosts(hosts, previous []byte) []byte {
	previous = bytes.TrimSpace(previous)
	if len(previous) == 0 || bytes.Contains(hosts, previous) {
		return hosts
	}
	out := append(bytes.TrimRight(slices.Clone(hosts), "\n"), '\n')
	return append(append(out, previous...), '\n')
}

// hostKeys returns the known_hosts lines for the server of repoURL: the
// source Secret's when they cover it, so that a changed key is refused,
// else the server's own, collected and printed (trust on first use).
func (r *runner) hostKeys(ctx context.Context, repoURL string) ([]byte, error) {
	hosts := r.secret.data[git.SecretKnownHosts]
	if git.KnownHostsCover(hosts, repoURL) {
		return hosts, nil
	}
	u, _ := url.Parse(repoURL)
	r.log.Actionf("collecting the SSH host key of %s", u.Host)
	hosts, err := git.ScanHostKeyAlgorithms(ctx, repoURL, r.o.SSHHostKeyAlgos)
	if err != nil {
		return nil, fmt.Errorf("collecting the SSH host key: %w", err)
	}
	for _, line := range describeHostKeys(hosts) {
		r.log.Successf("host key: %s", line)
	}
	return hosts, nil
}

// describeHostKeys turns known_hosts lines into "<hosts> <type> <SHA256
// fingerprint>" for the user to compare with what the Git host publishes.
func describeHostKeys(knownHosts []byte) []string {
	var out []string
	rest := knownHosts
	for len(rest) > 0 {
		_, hosts, key, _, next, err := ssh.ParseKnownHosts(rest)
		if err != nil {
			break
		}
		out = append(out, fmt.Sprintf("%s %s %s", bytes.Join(toBytes(hosts), []byte(",")), key.Type(), ssh.FingerprintSHA256(key)))
		rest = next
	}
	return out
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// reconcileSourceSecret creates or updates the source Secret when what it
// should hold differs from what it holds. An SSH Secret without a given
// private key keeps its deploy key; the first time one is generated,
// printed, and (unless silent) the user confirms the Git host accepts it.
//
// When moving is set (the sync objects change address, e.g. HTTPS to SSH)
// the Secret first holds the old credentials and the new ones together:
// until the Kustomization has applied the new commit it may apply the old
// GitRepository again, and that one must still be able to fetch (it would
// otherwise never see the commit that moves it). finishMove drops the old
// credentials once the cluster is at the new commit.
func (r *runner) reconcileSourceSecret(ctx context.Context, moving bool) error {
	ns, name := r.o.Components.Namespace, r.o.SecretName
	r.log.Actionf("determining if source secret %q exists", ns+"/"+name)
	want, err := r.desiredSecretData(ctx)
	if err != nil {
		return err
	}
	if maps.EqualFunc(want, r.secret.data, bytes.Equal) {
		r.log.Successf("source secret up to date")
		return nil
	}
	r.log.Actionf("applying source secret %q", ns+"/"+name)
	apply := want
	if moving && r.secret.exists {
		apply = transitionData(r.secret.data, want)
		if !maps.EqualFunc(apply, want, bytes.Equal) {
			r.pendingSecret = want
		}
	}
	if err := r.applySourceSecret(ctx, apply); err != nil {
		return err
	}
	r.secretChanged = true
	r.log.Successf("reconciled source secret")
	return nil
}

// transitionData is the Secret of a move: the old credentials and the new
// ones, the new ones winning where both have a key.
func transitionData(old, want map[string][]byte) map[string][]byte {
	data := maps.Clone(old)
	maps.Copy(data, want)
	return data
}

// applySourceSecret writes the source Secret with exactly data (server-side
// apply: keys bootstrap wrote before and data lacks are removed).
func (r *runner) applySourceSecret(ctx context.Context, data map[string][]byte) error {
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: r.o.SecretName, Namespace: r.o.Components.Namespace},
		Data:       data,
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(secret)
	if err != nil {
		return err
	}
	err = install.Apply(ctx, r.kube, []*unstructured.Unstructured{{Object: obj}}, install.ApplyOptions{})
	if err != nil {
		return fmt.Errorf("applying source secret: %w", err)
	}
	return nil
}

// finishMove drops the old credentials from the source Secret after a
// move, once the cluster runs the new commit (whose GitRepository has the
// new address), and waits until the GitRepository fetched again with the
// new credentials alone: a move is verified, not assumed.
func (r *runner) finishMove(ctx context.Context) error {
	if r.pendingSecret == nil {
		return nil
	}
	r.log.Actionf("removing the previous credentials from source secret %q", r.o.Components.Namespace+"/"+r.o.SecretName)
	if err := r.applySourceSecret(ctx, r.pendingSecret); err != nil {
		return err
	}
	r.pendingSecret = nil
	r.requested = time.Now().Format(time.RFC3339Nano)
	if err := requestReconcile(ctx, r.kube, r.o.Components.Namespace, r.requested); err != nil {
		return err
	}
	return r.waitSynced(ctx)
}

// desiredSecretData is what the source Secret should hold.
func (r *runner) desiredSecretData(ctx context.Context) (map[string][]byte, error) {
	if r.o.scheme() != "ssh" {
		data := map[string][]byte{git.SecretUsername: []byte(r.o.Username), git.SecretPassword: []byte(r.o.Password)}
		if len(r.o.CA) > 0 {
			data[git.SecretCA] = r.o.CA
		}
		return data, nil
	}
	if len(r.o.PrivateKey) > 0 {
		signer, err := r.parsePrivateKey()
		if err != nil {
			return nil, err
		}
		data := map[string][]byte{
			git.SecretIdentity:        r.o.PrivateKey,
			sshkey.PublicKeySecretKey: ssh.MarshalAuthorizedKey(signer.PublicKey()),
			git.SecretKnownHosts:      r.knownHosts,
		}
		if r.o.Password != "" {
			data[git.SecretPassword] = []byte(r.o.Password)
		}
		if r.o.AuthorizeDeployKey != nil {
			if err := r.o.AuthorizeDeployKey(ctx, string(bytes.TrimSpace(data[sshkey.PublicKeySecretKey]))); err != nil {
				return nil, err
			}
		}
		return data, nil
	}
	if r.secret.exists && len(r.secret.data[git.SecretIdentity]) > 0 {
		// Keep the deploy key the Git host already knows; only the host
		// keys follow the URL.
		data := maps.Clone(r.secret.data)
		data[git.SecretKnownHosts] = r.knownHosts
		return data, nil
	}
	r.log.Generatef("generating source secret")
	kp, err := sshkey.Generate(r.o.SSHKey)
	if err != nil {
		return nil, err
	}
	r.result.DeployKey = string(bytes.TrimSpace(kp.AuthorizedKey))
	r.log.Successf("public key: %s", r.result.DeployKey)
	switch {
	case r.o.AuthorizeDeployKey != nil:
		if err := r.o.AuthorizeDeployKey(ctx, r.result.DeployKey); err != nil {
			return nil, err
		}
	case r.confirm != nil:
		ok, err := r.confirm(ctx, "Please give the key access to your repository")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errors.New("aborting: the deploy key was not given access to the repository")
		}
	}
	return map[string][]byte{
		git.SecretIdentity:        kp.PrivateKeyPEM,
		sshkey.PublicKeySecretKey: kp.AuthorizedKey,
		git.SecretKnownHosts:      r.knownHosts,
	}, nil
}

func (r *runner) parsePrivateKey() (ssh.Signer, error) {
	// Password decrypts an encrypted key and is ignored next to a plain
	// one, as git.NewAuth does: refusing here would fail after the push.
	signer, err := ssh.ParsePrivateKey(r.o.PrivateKey)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) && r.o.Password != "" {
		signer, err = ssh.ParsePrivateKeyWithPassphrase(r.o.PrivateKey, []byte(r.o.Password))
	}
	if err != nil {
		return nil, fmt.Errorf("reading the private key: %w", err)
	}
	return signer, nil
}

// reconcilePullSecret applies the image pull Secret of --registry-creds.
// It holds credentials, so it lives in the cluster only, not in Git.
func (r *runner) reconcilePullSecret(ctx context.Context) error {
	secret, err := r.o.Components.PullSecret()
	if err != nil || secret == nil {
		return err
	}
	r.log.Actionf("applying image pull secret %q", secret.GetNamespace()+"/"+secret.GetName())
	if err := install.Apply(ctx, r.kube, []*unstructured.Unstructured{secret}, install.ApplyOptions{}); err != nil {
		return fmt.Errorf("applying image pull secret: %w", err)
	}
	r.log.Successf("reconciled image pull secret")
	return nil
}
