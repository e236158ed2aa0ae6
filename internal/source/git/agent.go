package git

import (
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// agentDialTimeout bounds connecting to the agent's unix socket, which
// either answers at once or is not there.
const agentDialTimeout = 5 * time.Second

// NewAgentAuth is Auth for an ssh repoURL that signs with the keys of the
// SSH agent listening on socket, checking the server's host key against
// knownHosts (known_hosts format, required). It is for the CLI, which
// passes the user's SSH_AUTH_SOCK explicitly: this package never reads the
// environment, and the controller never uses agents.
//
// The agent is dialled here, to fail early when it is not running or holds
// no key, and that one connection serves every SSH connection made with
// the Auth until Close. Using the Auth after Close dials the agent again.
func NewAgentAuth(repoURL string, knownHosts []byte, socket string) (*Auth, error) {
	u, s, err := parseRepoURL(repoURL)
	if err != nil {
		return nil, err
	}
	if s != schemeSSH {
		return nil, invalidf("ssh agent authentication needs an ssh URL, not %s", u.Redacted())
	}
	if socket == "" {
		return nil, invalidf("no ssh agent socket given (is SSH_AUTH_SOCK set?)")
	}
	if len(knownHosts) == 0 {
		return nil, invalidf("ssh URLs need known_hosts: the server's host key is always verified")
	}
	kh, err := parseKnownHosts(knownHosts)
	if err != nil {
		return nil, err
	}
	a := &Auth{url: u, scheme: s, sshUser: u.User.Username(), agent: &sshAgent{socket: socket}, knownHosts: kh}
	if a.sshUser == "" {
		a.sshUser = defaultSSHUser
	}
	if _, err := a.agent.signers(); err != nil {
		return nil, err
	}
	a.moveURLCredentials()
	return a, nil
}

// Close releases the SSH agent connection of an Auth from NewAgentAuth. It
// does nothing for other Auths, which hold no connection.
func (a *Auth) Close() error {
	if a == nil || a.agent == nil {
		return nil
	}
	return a.agent.close()
}

// sshAgent is one connection to an SSH agent, opened on first use and
// shared by the SSH connections of one Auth (the agent client pipelines
// concurrent requests). Its failures match ErrAuth: the agent, not the
// remote, is at fault, and the wrapped dial error must not read as an
// unreachable remote.
type sshAgent struct {
	socket string

	mu     sync.Mutex
	conn   net.Conn // nil until first use and after close
	client agent.ExtendedAgent
}

// signers lists the agent's keys, dialling it if needed; the returned
// signers ask the agent for every signature.
func (g *sshAgent) signers() ([]ssh.Signer, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conn == nil {
		conn, err := net.DialTimeout("unix", g.socket, agentDialTimeout)
		if err != nil {
			return nil, fmt.Errorf("%w: connect to ssh agent at %s: %v", ErrAuth, g.socket, err) //nolint:errorlint // the dial error stays out of the chain so classify does not also call it ErrUnreachable
		}
		g.conn, g.client = conn, agent.NewClient(conn)
	}
	signers, err := g.client.Signers()
	if err != nil {
		// A broken connection is dialled afresh next time.
		_ = g.closeLocked()
		return nil, fmt.Errorf("%w: list ssh agent keys: %v", ErrAuth, err) //nolint:errorlint // the agent's I/O error stays out of the chain so classify does not reclassify it
	}
	if len(signers) == 0 {
		return nil, fmt.Errorf("%w: the ssh agent at %s holds no keys", ErrAuth, g.socket)
	}
	return signers, nil
}

func (g *sshAgent) close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closeLocked()
}

func (g *sshAgent) closeLocked() error {
	if g.conn == nil {
		return nil
	}
	err := g.conn.Close()
	g.conn, g.client = nil, nil
	return err
}
