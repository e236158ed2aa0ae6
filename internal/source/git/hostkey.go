package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// errHostKeySeen ends a ScanHostKey handshake once the key is recorded.
var errHostKeySeen = errors.New("host key recorded")

// scanAlgorithms are the host key algorithm families ScanHostKey asks for,
// one handshake each, as ssh-keyscan does: a server with several host keys
// shows one per handshake.
var scanAlgorithms = [][]string{
	{ssh.KeyAlgoED25519},
	{ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521},
	{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256},
}

// ScanHostKey connects to the SSH server of repoURL and returns the host
// keys it presents as known_hosts lines ("[host]:port <type> <base64>", or
// "host <type> <base64>" for port 22), one per key type the server has
// among ed25519, ECDSA and RSA. It is trust on first use: the CLI shows
// the keys to the user before storing them. No authentication is
// attempted; each handshake is cut off from the host key callback. ctx
// bounds the whole scan and closes the connection when it ends.
func ScanHostKey(ctx context.Context, repoURL string) ([]byte, error) {
	return ScanHostKeyAlgorithms(ctx, repoURL, nil)
}

// ScanHostKeyAlgorithms is ScanHostKey offering only algos, in one
// handshake (the CLI's --ssh-hostkey-algos); nil means ScanHostKey's
// families, one handshake each.
func ScanHostKeyAlgorithms(ctx context.Context, repoURL string, algos []string) ([]byte, error) {
	families := scanAlgorithms
	if len(algos) > 0 {
		families = [][]string{algos}
	}
	u, s, err := parseRepoURL(repoURL)
	if err != nil {
		return nil, err
	}
	if s != schemeSSH {
		return nil, invalidf("host keys can only be scanned for ssh URLs, not %s", u.Redacted())
	}
	addr := sshAddr(u)
	var out bytes.Buffer
	for _, algos := range families {
		key, err := scanOnce(ctx, addr, algos)
		var noCommon *noCommonAlgorithmError
		switch {
		case errors.As(err, &noCommon):
			continue // the server has no key of this type
		case err != nil:
			return nil, fmt.Errorf("scan ssh host key of %s: %w", addr, err)
		}
		out.WriteString(knownhosts.Line([]string{knownhosts.Normalize(addr)}, key) + "\n")
	}
	if out.Len() == 0 {
		offered := "ed25519, ecdsa or rsa"
		if len(algos) > 0 {
			offered = strings.Join(algos, ", ")
		}
		return nil, fmt.Errorf("scan ssh host key of %s: %w: the server offers no %s host key", addr, ErrHostKey, offered)
	}
	return out.Bytes(), nil
}

// noCommonAlgorithmError marks a handshake that failed only because the
// server has no host key of the algorithms asked for.
type noCommonAlgorithmError struct{ err error }

func (e *noCommonAlgorithmError) Error() string { return e.err.Error() }
func (e *noCommonAlgorithmError) Unwrap() error { return e.err }

// scanOnce makes one handshake offering algos and returns the host key.
func scanOnce(ctx context.Context, addr string, algos []string) (ssh.PublicKey, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, classify(ctx, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()

	var key ssh.PublicKey
	cfg := &ssh.ClientConfig{
		User:              defaultSSHUser,
		HostKeyAlgorithms: algos,
		HostKeyCallback: func(_ string, _ net.Addr, k ssh.PublicKey) error {
			key = k
			return errHostKeySeen
		},
	}
	_, _, _, err = ssh.NewClientConn(conn, addr, cfg)
	var negotiation *ssh.AlgorithmNegotiationError
	switch {
	case key != nil:
		return key, nil
	case err == nil:
		return nil, errors.New("handshake finished without a host key") // cannot happen: the callback refuses
	case errors.As(err, &negotiation) && negotiation.What == "host key":
		return nil, &noCommonAlgorithmError{err: err}
	}
	return nil, classify(ctx, err)
}

// KnownHostsCover reports whether knownHosts records a trusted key for the
// SSH server of repoURL: when it does, the caller checks the server against
// it; when it does not (a new host), it has to learn the key first.
// Unparsable known_hosts data covers nothing.
func KnownHostsCover(knownHosts []byte, repoURL string) bool {
	u, s, err := parseRepoURL(repoURL)
	if err != nil || s != schemeSSH {
		return false
	}
	kh, err := parseKnownHosts(knownHosts)
	if err != nil {
		return false
	}
	trusted, _ := kh.keysFor(sshAddr(u))
	return len(trusted) > 0
}
