package bucket

import (
	"context"
	"fmt"

	"golang.org/x/oauth2"

	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	gcpauth "github.com/weir-gitops/weir/internal/auth/gcp"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/bucket"
)

// gcsClient builds the gcp provider's client: the Secret's JSON key, else
// the cloud identity's access token (internal/auth/gcp, cached).
func (r *Reconciler) gcsClient(ctx context.Context, obj *sourcev1.Bucket) (*bucket.Client, error) {
	cfg := bucket.GCSConfig{Endpoint: obj.Spec.Endpoint, Insecure: obj.Spec.Insecure}
	var err error
	if cfg.Proxy, err = r.proxy(ctx, obj); err != nil {
		return nil, err
	}
	if ref := obj.Spec.SecretRef; ref != nil {
		s, err := r.secret(ctx, obj.Namespace, ref.Name)
		if err != nil {
			return nil, authErr(err)
		}
		if err := bucket.GCSValidateSecret(s.Name, s.Data); err != nil {
			return nil, authErr(err)
		}
		cfg.ServiceAccountKey = s.Data[bucket.SecretGCPServiceAccount]
	} else {
		id, err := r.identity(obj)
		if err != nil {
			return nil, err
		}
		t, err := gcpauth.Default.AccessToken(ctx, id, r.Auth)
		if err != nil {
			return nil, authErr(fmt.Errorf("failed to get credentials from 'gcp': %w", err))
		}
		cfg.Token = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: t.Value, TokenType: "Bearer", Expiry: t.ExpiresAt})
	}
	c, err := bucket.NewGCS(ctx, cfg)
	if err != nil {
		return nil, clientErr(err)
	}
	return c, nil
}

// clientErr is a client that cannot be built: a bad endpoint stalls, a
// bad key is an authentication failure.
func clientErr(err error) error {
	if r := bucketError(err); errs.Reason(r, "") == sourcev1.URLInvalidReason {
		return r
	}
	return authErr(err)
}
