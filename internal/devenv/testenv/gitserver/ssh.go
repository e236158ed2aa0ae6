package gitserver

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// ClientKey is an SSH client identity for tests, in the forms a Flux-style
// Secret carries it.
type ClientKey struct {
	// PrivateKeyPEM is the private key in OpenSSH format ("identity").
	PrivateKeyPEM []byte
	// AuthorizedKey is the public key in authorized_keys format ("identity.pub").
	AuthorizedKey []byte
	// PublicKey is the public key for Options.AuthorizedKeys.
	PublicKey ssh.PublicKey
}

// GenerateClientKey makes a fresh ed25519 client key pair.
func GenerateClientKey(t testing.TB) ClientKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("generate ed25519 key: %v", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "weir-test")
	if err != nil {
		t.Fatalf("marshal private key: %v", err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatalf("convert public key: %v", err)
	}
	return ClientKey{
		PrivateKeyPEM: pem.EncodeToMemory(block),
		AuthorizedKey: ssh.MarshalAuthorizedKey(sshPub),
		PublicKey:     sshPub,
	}
}

// sshServer runs git-upload-pack and git-receive-pack for clients whose key
// is on the allow-list.
type sshServer struct {
	listener  net.Listener
	hostKey   ssh.Signer
	config    *ssh.ServerConfig
	root      string
	git, home string

	keysMu     sync.Mutex
	authorized []ssh.PublicKey // guarded by keysMu; grows through authorize

	ctx    context.Context // cancelled on close: kills running git processes
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

func startSSH(root, git, home string, authorized []ssh.PublicKey) (*sshServer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate host key: %w", err)
	}
	hostKey, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, fmt.Errorf("host key signer: %w", err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &sshServer{
		listener: listener, hostKey: hostKey,
		root: root, git: git, home: home,
		authorized: append([]ssh.PublicKey(nil), authorized...),
		ctx:        ctx, cancel: cancel, conns: map[net.Conn]struct{}{},
	}
	s.config = &ssh.ServerConfig{PublicKeyCallback: s.checkKey}
	s.config.AddHostKey(hostKey)
	s.wg.Go(s.serve)
	return s, nil
}

// checkKey is the ssh.ServerConfig's PublicKeyCallback: the key must be on
// the allow-list at the time the client offers it.
func (s *sshServer) checkKey(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	for _, k := range s.authorized {
		if bytes.Equal(k.Marshal(), key.Marshal()) {
			return &ssh.Permissions{}, nil
		}
	}
	return nil, fmt.Errorf("public key %s of user %q is not authorized", ssh.FingerprintSHA256(key), meta.User())
}

// authorize adds key to the allow-list; connections made afterwards may
// use it.
func (s *sshServer) authorize(key ssh.PublicKey) {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	s.authorized = append(s.authorized, key)
}

func (s *sshServer) addr() string { return s.listener.Addr().String() }

func (s *sshServer) knownHosts() []byte {
	return []byte(knownhosts.Line([]string{knownhosts.Normalize(s.addr())}, s.hostKey.PublicKey()) + "\n")
}

// close stops accepting, kills running git processes, drops every connection
// and waits for all goroutines to end.
func (s *sshServer) close() {
	_ = s.listener.Close()
	s.mu.Lock()
	s.cancel()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *sshServer) serve() {
	for {
		conn, err := s.listener.Accept()
		if err != nil {
			return // listener closed
		}
		s.mu.Lock()
		if s.ctx.Err() != nil { // close has already dropped the tracked connections
			s.mu.Unlock()
			_ = conn.Close()
			return
		}
		s.conns[conn] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() { s.handleConn(conn) })
	}
}

func (s *sshServer) handleConn(conn net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		_ = conn.Close()
	}()
	// A failed handshake, including an unknown client key, ends here.
	_, chans, reqs, err := ssh.NewServerConn(conn, s.config)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for newCh := range chans {
		if newCh.ChannelType() != "session" {
			_ = newCh.Reject(ssh.UnknownChannelType, "only session channels are supported")
			continue
		}
		ch, chReqs, err := newCh.Accept()
		if err != nil {
			continue
		}
		s.wg.Go(func() { s.handleSession(ch, chReqs) })
	}
}

// handleSession serves one exec request; env requests may pass GIT_PROTOCOL
// (the git CLI's protocol v2), anything else is declined.
func (s *sshServer) handleSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	var env []string
	for req := range reqs {
		switch req.Type {
		case "env":
			var kv struct{ Name, Value string }
			ok := ssh.Unmarshal(req.Payload, &kv) == nil && kv.Name == "GIT_PROTOCOL"
			if ok {
				env = append(env, kv.Name+"="+kv.Value)
			}
			_ = req.Reply(ok, nil)
		case "exec":
			var payload struct{ Command string }
			if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
				_ = req.Reply(false, nil)
				return
			}
			_ = req.Reply(true, nil)
			go ssh.DiscardRequests(reqs)
			status := s.run(ch, payload.Command, env)
			_ = ch.CloseWrite()
			_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{status}))
			return
		default:
			_ = req.Reply(false, nil)
		}
	}
}

// run executes one git service for the channel and returns its exit status.
func (s *sshServer) run(ch ssh.Channel, command string, env []string) uint32 {
	service, repo, err := parseGitCommand(command)
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "fatal: %v\n", err)
		return 128
	}
	cmd := exec.CommandContext(s.ctx, s.git, service, filepath.Join(s.root, repo))
	cmd.Env = append(gitEnv(s.home), env...)
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	// Copy stdin ourselves: exec would wait for that copy, which only ends
	// when the client closes its side, and clients wait for us to exit first.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(ch.Stderr(), "fatal: %v\n", err)
		return 128
	}
	go func() {
		_, _ = io.Copy(stdin, ch)
		_ = stdin.Close()
	}()
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) && exitErr.ExitCode() > 0 {
			return uint32(exitErr.ExitCode())
		}
		fmt.Fprintf(ch.Stderr(), "fatal: %v\n", err)
		return 128
	}
	return 0
}

// parseGitCommand splits an exec request such as "git-upload-pack '/org/app.git'"
// into the git subcommand ("upload-pack") and the repository path relative to
// the server root. Other commands, and paths that leave the root, are refused.
func parseGitCommand(command string) (service, repo string, err error) {
	verb, arg, ok := strings.Cut(command, " ")
	if !ok {
		return "", "", fmt.Errorf("malformed command %q", command)
	}
	switch verb {
	case "git-upload-pack", "git-receive-pack":
	default:
		return "", "", fmt.Errorf("command %q is not allowed", verb)
	}
	path := strings.TrimSpace(arg)
	if len(path) >= 2 && path[0] == '\'' && path[len(path)-1] == '\'' {
		path = path[1 : len(path)-1]
	}
	if strings.ContainsAny(path, "'\\") {
		return "", "", fmt.Errorf("repository path %q is not allowed", path)
	}
	rel := strings.TrimPrefix(path, "/")
	if !filepath.IsLocal(rel) {
		return "", "", fmt.Errorf("repository path %q escapes the server root", path)
	}
	return strings.TrimPrefix(verb, "git-"), filepath.Clean(rel), nil
}
