package bucket

import (
	"context"
	"errors"
	"fmt"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/auth"
	awsauth "github.com/weir-gitops/weir/internal/auth/aws"
	"github.com/weir-gitops/weir/internal/runtime/errs"
	"github.com/weir-gitops/weir/internal/source/bucket"
)

// Keys of spec.sts.secretRef for the ldap STS provider, as Flux names them.
const (
	stsUsername = "username"
	stsPassword = "password"
)

// s3Auth completes cfg for the S3 providers: spec.sts, and for aws
// without spec.secretRef the cloud identity (the controller's, or with
// the ObjectLevelWorkloadIdentity gate the object's ServiceAccount).
func (r *Reconciler) s3Auth(ctx context.Context, obj *sourcev1.Bucket, cfg *bucket.Config) error {
	provider := obj.Spec.Provider
	if provider == "" {
		provider = sourcev1.BucketProviderGeneric
	}
	sts := obj.Spec.STS // checked by supported
	switch {
	case provider == sourcev1.BucketProviderAmazon:
		if cfg.Endpoint == "" {
			cfg.Endpoint = bucket.DefaultAWSEndpoint
		}
		if obj.Spec.SecretRef != nil {
			return nil
		}
		endpoint := ""
		if sts != nil {
			endpoint = sts.Endpoint
		}
		return r.awsCredentials(ctx, obj, endpoint, cfg)
	case sts != nil && cfg.Credentials == nil:
		ldap, err := r.ldapConfig(ctx, obj.Namespace, sts)
		cfg.LDAP = ldap
		return err
	}
	return nil
}

// validateSTS is Flux's check of spec.sts against the bucket provider
// (the CRD's rules say the same; an API server without them, or an object
// stored before them, still gets the message).
func validateSTS(provider string, sts *sourcev1.BucketSTSSpec) error {
	want := map[string]string{
		sourcev1.BucketProviderAmazon:  sourcev1.STSProviderAmazon,
		sourcev1.BucketProviderGeneric: sourcev1.STSProviderLDAP,
	}[provider]
	switch {
	case want == "":
		return fmt.Errorf("STS configuration is not supported for '%s' bucket provider", provider)
	case sts.Provider != want:
		return fmt.Errorf("STS provider '%s' is not supported for '%s' bucket provider", sts.Provider, provider)
	case sts.Provider == sourcev1.STSProviderAmazon && sts.SecretRef != nil:
		return fmt.Errorf("spec.sts.secretRef is not required for the '%s' STS provider", sts.Provider)
	case sts.Provider == sourcev1.STSProviderAmazon && sts.CertSecretRef != nil:
		return fmt.Errorf("spec.sts.certSecretRef is not required for the '%s' STS provider", sts.Provider)
	}
	return nil
}

// awsCredentials asks internal/auth/aws for the identity's credentials
// (IRSA, EKS Pod Identity, the node; or the ServiceAccount's role through
// STS AssumeRoleWithWebIdentity), cached until they near expiry. The
// exchange goes through spec.proxySecretRef's proxy (cfg.Proxy).
func (r *Reconciler) awsCredentials(ctx context.Context, obj *sourcev1.Bucket, stsEndpoint string, cfg *bucket.Config) error {
	id, err := r.identity(obj)
	if err != nil {
		return err
	}
	c, err := awsauth.CredentialsWithSTS(ctx, r.Auth.WithProxy(cfg.Proxy), id, obj.Spec.Region, stsEndpoint)
	if err != nil {
		return authErr(fmt.Errorf("failed to get credentials from 'aws': %w", err))
	}
	cfg.Credentials = &bucket.Credentials{AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken}
	return nil
}

// identity decides whose cloud identity the object uses; a
// spec.serviceAccountName without the gate stalls with Flux's message.
func (r *Reconciler) identity(obj *sourcev1.Bucket) (auth.Identity, error) {
	id, err := r.Auth.IdentityFor(obj.Namespace, obj.Spec.ServiceAccountName)
	if errors.Is(err, auth.ErrObjectLevelDisabled) {
		return id, &errs.Stalling{Reason: meta.FeatureGateDisabledReason, Err: fmt.Errorf(
			"to use spec.serviceAccountName for provider authentication please enable the %s feature gate in the controller", auth.FeatureGate)}
	}
	return id, err
}

// ldapConfig reads spec.sts's Secrets for MinIO's LDAP STS.
func (r *Reconciler) ldapConfig(ctx context.Context, namespace string, sts *sourcev1.BucketSTSSpec) (*bucket.LDAPConfig, error) {
	l := &bucket.LDAPConfig{Endpoint: sts.Endpoint}
	if ref := sts.SecretRef; ref != nil {
		s, err := r.secret(ctx, namespace, ref.Name)
		if err != nil {
			return nil, authErr(err)
		}
		user, okU := s.Data[stsUsername]
		pass, okP := s.Data[stsPassword]
		if !okU || !okP {
			return nil, authErr(fmt.Errorf("invalid '%s' secret data for '%s' STS provider: required fields %s, %s",
				s.Name, sts.Provider, stsUsername, stsPassword))
		}
		l.Username, l.Password = string(user), string(pass)
	}
	if ref := sts.CertSecretRef; ref != nil {
		s, err := r.secret(ctx, namespace, ref.Name)
		if err != nil {
			return nil, authErr(err)
		}
		if l.TLS, err = bucket.TLSFromSecret(s.Data); err != nil {
			return nil, authErr(fmt.Errorf("failed to get STS TLS config: %w", err))
		}
	}
	return l, nil
}
