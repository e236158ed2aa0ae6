package git

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/url"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/transport"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/net/proxy"
)

// dialScheme is the proxy URL scheme through which go-git's SSH transport
// reaches dialContext. go-git dials SSH with a background context and no
// deadline on the handshake, so a server that accepts the connection and
// then says nothing would hold a reconcile forever. go-git does hand the
// dial to golang.org/x/net/proxy when ProxyOptions.URL is set, and x/net
// looks up schemes it does not know in a registry; registering ours lets
// every SSH connection be dialled with the operation's context and closed
// when that context ends.
const dialScheme = "weir-ssh-dial"

// dialers maps the host part of a dialScheme URL to the operation it
// belongs to.
var dialers sync.Map // string → *sshDialer

func init() {
	// go-git reads ~/.ssh/config (Hostname, Port) through this variable; a
	// user's configuration must not redirect weir's connections.
	gitssh.DefaultSSHConfig = nil
	// With no auth method go-git would ask an SSH agent; weir always sets
	// one, and this makes any path that forgets fail loudly instead.
	gitssh.DefaultAuthBuilder = func(string) (gitssh.AuthMethod, error) {
		return nil, errors.New("ssh: no credentials configured (agent and ~/.ssh are never used)")
	}
	proxy.RegisterDialerType(dialScheme, func(u *url.URL, _ proxy.Dialer) (proxy.Dialer, error) {
		d, ok := dialers.Load(u.Host)
		if !ok {
			return nil, errors.New("ssh dial outside of a git operation")
		}
		return d.(*sshDialer), nil
	})
}

// sshDialer dials for one operation, optionally through a SOCKS5 proxy.
type sshDialer struct {
	ctx   context.Context
	proxy *url.URL
}

// registerSSHDialer makes SSH connections of go-git calls given the
// returned options use ctx; release must be called when the operation ends.
func registerSSHDialer(ctx context.Context, p *Proxy) (opts transport.ProxyOptions, release func()) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	d := &sshDialer{ctx: ctx}
	if p != nil {
		d.proxy = p.url
	}
	dialers.Store(id, d)
	return transport.ProxyOptions{URL: dialScheme + "://" + id}, func() { dialers.Delete(id) }
}

func (d *sshDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(d.ctx, network, addr)
}

// DialContext ignores go-git's context (background) in favour of the
// operation's, and closes the connection when the operation's ends.
func (d *sshDialer) DialContext(_ context.Context, network, addr string) (net.Conn, error) {
	var (
		conn net.Conn
		err  error
	)
	if d.proxy != nil {
		var pd proxy.Dialer
		pd, err = proxy.FromURL(d.proxy, &net.Dialer{})
		if err != nil {
			return nil, err
		}
		cd, ok := pd.(proxy.ContextDialer)
		if !ok {
			return nil, errors.New("ssh proxy dialer cannot take a context")
		}
		conn, err = cd.DialContext(d.ctx, network, addr)
	} else {
		var nd net.Dialer
		conn, err = nd.DialContext(d.ctx, network, addr)
	}
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(d.ctx, func() { _ = conn.Close() })
	return &ctxConn{Conn: conn, stop: stop}, nil
}

// ctxConn stops watching the context once closed.
type ctxConn struct {
	net.Conn
	stop func() bool
}

func (c *ctxConn) Close() error {
	c.stop()
	return c.Conn.Close()
}
