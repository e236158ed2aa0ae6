package neterr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		tls, dial bool
	}{
		{name: "unknown authority", err: fmt.Errorf("get: %w", x509.UnknownAuthorityError{}), tls: true},
		{name: "hostname", err: x509.HostnameError{Host: "example"}, tls: true},
		{name: "plain text answer", err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, tls: true},
		{name: "alert from the server", err: &net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, tls: true},
		{name: "refused", err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, dial: true},
		{name: "refused bare", err: fmt.Errorf("x: %w", syscall.ECONNREFUSED), dial: true},
		{name: "dns", err: &net.DNSError{Name: "nowhere.invalid", IsNotFound: true}, dial: true},
		{name: "deadline", err: fmt.Errorf("read: %w", os.ErrDeadlineExceeded), dial: true},
		{name: "context deadline", err: context.DeadlineExceeded, dial: true},
		{name: "read reset", err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}},
		{name: "other", err: errors.New("boom")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTLS(tt.err); got != tt.tls {
				t.Errorf("IsTLS = %v, want %v", got, tt.tls)
			}
			if got := IsDial(tt.err); got != tt.dial {
				t.Errorf("IsDial = %v, want %v", got, tt.dial)
			}
		})
	}
}
