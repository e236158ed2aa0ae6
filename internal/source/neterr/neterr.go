// Package neterr tells what kind of network failure an error is, so that
// every client of a remote (Git, OCI registries, Helm repositories) maps the
// same transport errors to the same condition reasons.
package neterr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"syscall"
)

// IsTLS reports whether err is a failed TLS handshake: a certificate that
// did not verify, a hostname mismatch, a plain-text answer to a TLS hello,
// or an alert sent by the server (e.g. "certificate required").
func IsTLS(err error) bool {
	var (
		verr  *tls.CertificateVerificationError
		uaerr x509.UnknownAuthorityError
		hnerr x509.HostnameError
		cierr x509.CertificateInvalidError
		rherr tls.RecordHeaderError
		opErr *net.OpError
	)
	if errors.As(err, &opErr) && opErr.Op == "remote error" {
		return true
	}
	return errors.As(err, &verr) || errors.As(err, &uaerr) || errors.As(err, &hnerr) ||
		errors.As(err, &cierr) || errors.As(err, &rherr)
}

// IsDial reports whether err means no conversation took place: the name
// did not resolve, the connection was refused or unroutable, or a deadline
// passed first.
func IsDial(err error) bool {
	var (
		opErr  *net.OpError
		dnsErr *net.DNSError
	)
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	return errors.As(err, &dnsErr) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, context.DeadlineExceeded)
}
