package bootstrap

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/weir-gitops/weir/internal/source/git"
	"github.com/weir-gitops/weir/internal/source/sshkey"
)

// testKey is an ed25519 key in the forms the tests need.
type testKey struct {
	signer ssh.Signer
	// pem is the private key in OpenSSH PEM form, unencrypted.
	pem []byte
	// encrypted is the same key protected by a passphrase, nil without
	// one (the KDF is slow).
	encrypted []byte
}

func newTestKey(t *testing.T, passphrase string) testKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "test")
	if err != nil {
		t.Fatal(err)
	}
	k := testKey{signer: signer, pem: pem.EncodeToMemory(block)}
	if passphrase == "" {
		return k
	}
	encBlock, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "test", []byte(passphrase))
	if err != nil {
		t.Fatal(err)
	}
	k.encrypted = pem.EncodeToMemory(encBlock)
	return k
}

func TestDescribeHostKeys(t *testing.T) {
	k1, k2 := newTestKey(t, ""), newTestKey(t, "")
	line1 := knownhosts.Line([]string{"git.example.com:22"}, k1.signer.PublicKey())
	line2 := knownhosts.Line([]string{"127.0.0.1:2222", "localhost:2222"}, k2.signer.PublicKey())
	fp1, fp2 := ssh.FingerprintSHA256(k1.signer.PublicKey()), ssh.FingerprintSHA256(k2.signer.PublicKey())
	desc1 := "git.example.com ssh-ed25519 " + fp1
	desc2 := "[127.0.0.1]:2222,[localhost]:2222 ssh-ed25519 " + fp2

	tests := []struct {
		name       string
		knownHosts string
		want       []string
	}{
		{name: "empty"},
		{name: "two keys", knownHosts: line1 + "\n" + line2 + "\n", want: []string{desc1, desc2}},
		{name: "no final newline", knownHosts: line1 + "\n" + line2, want: []string{desc1, desc2}},
		{
			name:       "comments and blank lines skipped",
			knownHosts: "# scanned by weir\n\n" + line1 + "\n\n" + line2 + "\n",
			want:       []string{desc1, desc2},
		},
		{
			name:       "garbage at the end ignored",
			knownHosts: line1 + "\n" + line2 + "\nthis is not a host key\n",
			want:       []string{desc1, desc2},
		},
		{
			name:       "garbage first stops",
			knownHosts: "this is not a host key\n" + line1 + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describeHostKeys([]byte(tt.knownHosts))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("describeHostKeys (-want +got):\n%s", diff)
			}
			for _, d := range got {
				if !strings.Contains(d, " SHA256:") {
					t.Errorf("%q carries no SHA256 fingerprint", d)
				}
			}
		})
	}
}

// confirmCall records the questions a Confirm was asked and answers them.
type confirmCall struct {
	questions []string
	answer    bool
	err       error
}

func (c *confirmCall) confirm(_ context.Context, question string) (bool, error) {
	c.questions = append(c.questions, question)
	return c.answer, c.err
}

func TestDesiredSecretData(t *testing.T) {
	const passphrase = "correct-horse-battery"
	key := newTestKey(t, passphrase)
	pub := ssh.MarshalAuthorizedKey(key.signer.PublicKey())
	hosts := []byte(knownhosts.Line([]string{"git.example.com"}, key.signer.PublicKey()) + "\n")
	const sshURL = "ssh://git@git.example.com/acme/fleet.git"
	const httpsURL = "https://git.example.com/acme/fleet.git"
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")

	tests := []struct {
		name   string
		opts   Options
		secret secretState
		want   map[string][]byte
		err    string
		// hidden must not appear in the error.
		hidden string
	}{
		{
			name: "https with a CA",
			opts: Options{URL: httpsURL, TokenAuth: true, Username: "git", Password: "token", CA: ca},
			want: map[string][]byte{"username": []byte("git"), "password": []byte("token"), "ca.crt": ca},
		},
		{
			name: "https without a CA",
			opts: Options{URL: httpsURL, TokenAuth: true, Username: "git", Password: "token"},
			want: map[string][]byte{"username": []byte("git"), "password": []byte("token")},
		},
		{
			name:   "https replaces an existing SSH secret",
			opts:   Options{URL: httpsURL, TokenAuth: true, Username: "git", Password: "token"},
			secret: secretState{exists: true, data: map[string][]byte{"identity": key.pem}},
			want:   map[string][]byte{"username": []byte("git"), "password": []byte("token")},
		},
		{
			name: "ssh with a private key",
			opts: Options{URL: sshURL, PrivateKey: key.pem},
			want: map[string][]byte{"identity": key.pem, "identity.pub": pub, "known_hosts": hosts},
		},
		{
			name: "ssh with an encrypted private key",
			opts: Options{URL: sshURL, PrivateKey: key.encrypted, Password: passphrase},
			want: map[string][]byte{
				"identity": key.encrypted, "identity.pub": pub, "known_hosts": hosts, "password": []byte(passphrase),
			},
		},
		{
			name:   "ssh with a private key replaces the existing deploy key",
			opts:   Options{URL: sshURL, PrivateKey: key.pem},
			secret: secretState{exists: true, data: map[string][]byte{"identity": []byte("old")}},
			want:   map[string][]byte{"identity": key.pem, "identity.pub": pub, "known_hosts": hosts},
		},
		{
			name:   "ssh with a wrong passphrase",
			opts:   Options{URL: sshURL, PrivateKey: key.encrypted, Password: "wrong-passphrase-42"},
			err:    "reading the private key",
			hidden: "wrong-passphrase-42",
		},
		{
			// git.NewAuth pushes with such a key; the Secret must not be
			// refused after the push.
			name: "ssh with a passphrase for an unencrypted key",
			opts: Options{URL: sshURL, PrivateKey: key.pem, Password: passphrase},
			want: map[string][]byte{
				"identity": key.pem, "identity.pub": pub, "known_hosts": hosts, "password": []byte(passphrase),
			},
		},
		{
			name: "ssh with an encrypted key and no passphrase",
			opts: Options{URL: sshURL, PrivateKey: key.encrypted},
			err:  "reading the private key",
		},
		{
			name: "ssh with a private key that is not one",
			opts: Options{URL: sshURL, PrivateKey: []byte("not a key")},
			err:  "reading the private key",
		},
		{
			name:   "ssh without a key keeps the existing deploy key",
			opts:   Options{URL: sshURL},
			secret: secretState{exists: true, data: map[string][]byte{"identity": key.pem, "identity.pub": pub, "known_hosts": hosts}},
			want:   map[string][]byte{"identity": key.pem, "identity.pub": pub, "known_hosts": hosts},
		},
		{
			name: "ssh without a key keeps the deploy key and takes the new host keys",
			opts: Options{URL: sshURL},
			secret: secretState{exists: true, data: map[string][]byte{
				"identity": key.pem, "password": []byte(passphrase), "known_hosts": []byte("old.example.com ssh-ed25519 AAAA\n"),
			}},
			want: map[string][]byte{"identity": key.pem, "password": []byte(passphrase), "known_hosts": hosts},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &recordingLogger{}
			asked := &confirmCall{answer: true}
			secret := secretState{exists: tt.secret.exists, data: maps.Clone(tt.secret.data)}
			r := &runner{o: tt.opts, log: log, confirm: asked.confirm, secret: &secret, knownHosts: hosts}
			got, err := r.desiredSecretData(context.Background())
			if diff := cmp.Diff(tt.secret.data, secret.data); diff != "" {
				t.Errorf("the Secret found was modified (-before +after):\n%s", diff)
			}
			wantErr(t, err, tt.err)
			if err != nil && tt.hidden != "" && strings.Contains(err.Error(), tt.hidden) {
				t.Errorf("error %q reveals the passphrase", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("secret data (-want +got):\n%s", diff)
			}
			if len(asked.questions) > 0 || r.result.DeployKey != "" {
				t.Errorf("a deploy key was generated: asked %q, key %q", asked.questions, r.result.DeployKey)
			}
		})
	}
}

func TestDesiredSecretDataGeneratesDeployKey(t *testing.T) {
	const sshURL = "ssh://git@git.example.com/acme/fleet.git"
	hosts := []byte("git.example.com ssh-ed25519 AAAA\n")
	confirmErr := errors.New("stdin closed")
	tests := []struct {
		name string
		// secret is the Secret found in the cluster.
		secret secretState
		// silent leaves Confirm nil.
		silent  bool
		answer  bool
		ansErr  error
		err     string
		wantAsk bool
	}{
		{name: "no secret", answer: true, wantAsk: true},
		{
			name:   "secret without identity",
			secret: secretState{exists: true, data: map[string][]byte{"username": []byte("git")}},
			answer: true, wantAsk: true,
		},
		{name: "silent", silent: true},
		{name: "user says no", answer: false, wantAsk: true, err: "aborting: the deploy key was not given access to the repository"},
		{name: "confirm fails", ansErr: confirmErr, wantAsk: true, err: "stdin closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &recordingLogger{}
			asked := &confirmCall{answer: tt.answer, err: tt.ansErr}
			secret := tt.secret
			r := &runner{
				o:   Options{URL: sshURL, SSHKey: sshkey.DefaultOptions()},
				log: log, secret: &secret, knownHosts: hosts,
			}
			if !tt.silent {
				r.confirm = asked.confirm
			}
			got, err := r.desiredSecretData(context.Background())
			wantErr(t, err, tt.err)

			var wantQuestions []string
			if tt.wantAsk {
				wantQuestions = []string{"Please give the key access to your repository"}
			}
			if diff := cmp.Diff(wantQuestions, asked.questions); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(r.result.DeployKey, "ecdsa-sha2-nistp384 ") {
				t.Errorf("DeployKey = %q, want an ecdsa-sha2-nistp384 key", r.result.DeployKey)
			}
			if !strings.Contains(log.String(), "success public key: "+r.result.DeployKey) {
				t.Errorf("the deploy key was not printed:\n%s", log)
			}
			if err != nil {
				if got != nil {
					t.Errorf("data returned with an error: %v", got)
				}
				return
			}

			if diff := cmp.Diff([]string{"identity", "identity.pub", "known_hosts"}, slices.Sorted(maps.Keys(got))); diff != "" {
				t.Errorf("secret keys (-want +got):\n%s", diff)
			}
			if !bytes.Equal(got[git.SecretKnownHosts], hosts) {
				t.Errorf("known_hosts = %q, want %q", got[git.SecretKnownHosts], hosts)
			}
			if string(bytes.TrimSpace(got[sshkey.PublicKeySecretKey])) != r.result.DeployKey {
				t.Errorf("identity.pub %q is not the printed deploy key %q", got[sshkey.PublicKeySecretKey], r.result.DeployKey)
			}
			signer, err := ssh.ParsePrivateKey(got[git.SecretIdentity])
			if err != nil {
				t.Fatalf("identity is not a private key: %v", err)
			}
			if derived := ssh.MarshalAuthorizedKey(signer.PublicKey()); !bytes.Equal(derived, got[sshkey.PublicKeySecretKey]) {
				t.Errorf("identity.pub %q does not match identity (%q)", got[sshkey.PublicKeySecretKey], derived)
			}
		})
	}
}

func TestReconcileSourceSecretUpToDate(t *testing.T) {
	const httpsURL = "https://git.example.com/acme/fleet.git"
	const knownHosts = "git.example.com ssh-ed25519 AAAA\n"
	tests := []struct {
		name   string
		opts   Options
		secret secretState
	}{
		{
			name: "same https credentials",
			opts: Options{URL: httpsURL, TokenAuth: true, Username: "git", Password: "token"},
			secret: secretState{exists: true, data: map[string][]byte{
				"username": []byte("git"), "password": []byte("token"),
			}},
		},
		{
			name: "existing deploy key kept",
			opts: Options{URL: "ssh://git@git.example.com/acme/fleet.git"},
			secret: secretState{exists: true, data: map[string][]byte{
				"identity": []byte("key"), "known_hosts": []byte(knownHosts),
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &recordingLogger{}
			secret := tt.secret
			// No client: an up-to-date Secret must not be written.
			r := &runner{o: tt.opts, log: log, secret: &secret, knownHosts: []byte(knownHosts)}
			if err := r.reconcileSourceSecret(context.Background(), false); err != nil {
				t.Fatal(err)
			}
			if r.secretChanged {
				t.Error("secretChanged set for an up-to-date Secret")
			}
			if !strings.Contains(log.String(), "success source secret up to date") {
				t.Errorf("log lacks the up-to-date line:\n%s", log)
			}
		})
	}
}

func TestTransitionData(t *testing.T) {
	https := map[string][]byte{"username": []byte("git"), "password": []byte("s3cret"), "ca.crt": []byte("CA")}
	ssh := map[string][]byte{"identity": []byte("KEY"), "identity.pub": []byte("PUB"), "known_hosts": []byte("HOSTS")}
	tests := []struct {
		name     string
		old, new map[string][]byte
		want     map[string][]byte
	}{
		{"https to ssh keeps both", https, ssh, map[string][]byte{
			"username": []byte("git"), "password": []byte("s3cret"), "ca.crt": []byte("CA"),
			"identity": []byte("KEY"), "identity.pub": []byte("PUB"), "known_hosts": []byte("HOSTS")}},
		{"the new value wins", https, map[string][]byte{"username": []byte("git"), "password": []byte("new")},
			map[string][]byte{"username": []byte("git"), "password": []byte("new"), "ca.crt": []byte("CA")}},
		{"nothing before", map[string][]byte{}, ssh, ssh},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := transitionData(tt.old, tt.new)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("transitionData (-want +got):\n%s", diff)
			}
			if len(tt.old) > 0 && tt.old["password"] == nil {
				t.Errorf("transitionData changed its input")
			}
		})
	}
}
