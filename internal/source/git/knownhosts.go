package git

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // known_hosts hashing is defined with HMAC-SHA1
	"encoding/base64"
	"errors"
	"io"
	"net"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownHosts is a known_hosts file held in memory. x/crypto's knownhosts
// package only reads files; the Secret's value should not have to touch the
// disk, and matching ourselves lets errors say "unknown" or "mismatch".
type knownHosts struct {
	entries []knownHostEntry
}

type knownHostEntry struct {
	revoked  bool
	patterns []string // comma-separated host patterns of the line
	key      ssh.PublicKey
}

// parseKnownHosts reads OpenSSH known_hosts lines. @cert-authority lines
// are skipped (host certificates are not supported); at least one plain
// entry is required.
func parseKnownHosts(data []byte) (*knownHosts, error) {
	kh := &knownHosts{}
	rest := data
	for {
		marker, hosts, key, _, next, err := ssh.ParseKnownHosts(rest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, invalidf("secret key %q: %v", SecretKnownHosts, err)
		}
		rest = next
		switch marker {
		case "":
			kh.entries = append(kh.entries, knownHostEntry{patterns: hosts, key: key})
		case "revoked":
			kh.entries = append(kh.entries, knownHostEntry{revoked: true, patterns: hosts, key: key})
		}
	}
	if !slices.ContainsFunc(kh.entries, func(e knownHostEntry) bool { return !e.revoked }) {
		return nil, invalidf("secret key %q has no host key line", SecretKnownHosts)
	}
	return kh, nil
}

// keysFor returns the trusted and revoked keys recorded for addr
// ("host:port").
func (kh *knownHosts) keysFor(addr string) (trusted, revoked []ssh.PublicKey) {
	host := strings.ToLower(knownhosts.Normalize(addr))
	for _, e := range kh.entries {
		if !matchHostPatterns(e.patterns, host) {
			continue
		}
		if e.revoked {
			revoked = append(revoked, e.key)
		} else {
			trusted = append(trusted, e.key)
		}
	}
	return trusted, revoked
}

// callback is the ssh.HostKeyCallback: the offered key must be one of the
// keys recorded for the host name go-git dialled (the remote IP is not
// consulted, as with OpenSSH's default CheckHostIP=no).
func (kh *knownHosts) callback(hostname string, _ net.Addr, key ssh.PublicKey) error {
	trusted, revoked := kh.keysFor(hostname)
	herr := &HostKeyError{Host: knownhosts.Normalize(hostname), Fingerprint: ssh.FingerprintSHA256(key)}
	for _, k := range revoked {
		if keysEqual(k, key) {
			herr.Revoked = true
			return herr
		}
	}
	if len(trusted) == 0 {
		herr.Unknown = true
		return herr
	}
	for _, k := range trusted {
		if keysEqual(k, key) {
			return nil
		}
	}
	return herr
}

// algorithms lists the host key algorithms to offer for addr, so that a
// server with several host keys shows the one known_hosts has. Nil (Go's
// defaults) when the host is unknown: the callback refuses it anyway.
func (kh *knownHosts) algorithms(addr string) []string {
	trusted, _ := kh.keysFor(addr)
	var algos []string
	for _, k := range trusted {
		switch t := k.Type(); t {
		case ssh.KeyAlgoRSA:
			algos = append(algos, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		default:
			algos = append(algos, t)
		}
	}
	slices.Sort(algos)
	return slices.Compact(algos)
}

func keysEqual(a, b ssh.PublicKey) bool { return bytes.Equal(a.Marshal(), b.Marshal()) }

// matchHostPatterns applies one known_hosts line's patterns to host (the
// normalised, lower-case "host" or "[host]:port"): some positive pattern
// must match and no negated one may.
func matchHostPatterns(patterns []string, host string) bool {
	matched := false
	for _, p := range patterns {
		negate := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		var ok bool
		if strings.HasPrefix(p, "|1|") {
			ok = matchHashedHost(p, host)
		} else {
			ok = wildcardMatch(strings.ToLower(p), host)
		}
		if ok && negate {
			return false
		}
		matched = matched || ok
	}
	return matched
}

// matchHashedHost checks a "|1|salt|hash" entry (HashKnownHosts yes):
// hash = HMAC-SHA1(key = salt, host).
func matchHashedHost(pattern, host string) bool {
	parts := strings.Split(pattern, "|")
	if len(parts) != 4 {
		return false
	}
	salt, err1 := base64.StdEncoding.DecodeString(parts[2])
	want, err2 := base64.StdEncoding.DecodeString(parts[3])
	if err1 != nil || err2 != nil {
		return false
	}
	mac := hmac.New(sha1.New, salt)
	mac.Write([]byte(host))
	return hmac.Equal(mac.Sum(nil), want)
}

// wildcardMatch is OpenSSH's pattern match: '*' any run, '?' one byte.
func wildcardMatch(pattern, s string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			pattern = strings.TrimLeft(pattern, "*")
			if pattern == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if wildcardMatch(pattern, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
		default:
			if s == "" || s[0] != pattern[0] {
				return false
			}
		}
		pattern, s = pattern[1:], s[1:]
	}
	return s == ""
}
