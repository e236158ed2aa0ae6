package render

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/weir-gitops/weir/internal/auth"
)

// roleARNAnnotation is the ServiceAccount annotation naming the IAM role
// its tokens assume (IRSA's, which Flux reads for object-level identity).
const roleARNAnnotation = "eks.amazonaws.com/role-arn"

// stsAudience is the audience of the ServiceAccount tokens STS accepts.
const stsAudience = "sts.amazonaws.com"

// roleARNPattern is the role ARN shape Flux accepts in the annotation.
var roleARNPattern = regexp.MustCompile(`^arn:aws[\w-]*:iam::[0-9]{1,30}:role/.{1,200}$`)

// awsWebIdentity returns the AWS credentials of an object-level identity
// for KMS keys in a region: a TokenRequest for the ServiceAccount
// (audience sts.amazonaws.com) exchanged through STS
// AssumeRoleWithWebIdentity for the role its eks.amazonaws.com/role-arn
// annotation names, with Flux's session name
// <name>.<namespace>.<region>.fluxcd.io. The exchange happens when a KMS
// call first needs credentials, and is kept in settings.Cache.
//
// It is a small local piece until the registries' internal/auth/aws
// exists to share.
func awsWebIdentity(settings *auth.Settings, id auth.Identity) func(region string) aws.CredentialsProvider {
	return func(region string) aws.CredentialsProvider {
		return &webIdentity{settings: settings, id: id, region: region}
	}
}

type webIdentity struct {
	settings *auth.Settings
	id       auth.Identity
	region   string
}

// sessionCredentials are the exchanged credentials as the cache keeps
// them (in auth.Token's Value, a secret).
type sessionCredentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

func (w *webIdentity) Retrieve(ctx context.Context) (aws.Credentials, error) {
	sa, err := w.settings.ServiceAccount(ctx, w.id)
	if err != nil {
		return aws.Credentials{}, err
	}
	roleARN := sa.Annotations[roleARNAnnotation]
	if !roleARNPattern.MatchString(roleARN) {
		return aws.Credentials{}, fmt.Errorf("invalid %s annotation: '%s'. must match %s", roleARNAnnotation, roleARN, roleARNPattern)
	}
	key := "aws/kms/" + w.id.String() + "/" + roleARN + "/" + w.region
	tok, err := w.settings.Cache.Get(ctx, key, func(ctx context.Context) (auth.Token, error) {
		return w.exchange(ctx, sa.Name, sa.Namespace, roleARN)
	})
	if err != nil {
		return aws.Credentials{}, err
	}
	var c sessionCredentials
	if err := json.Unmarshal([]byte(tok.Value), &c); err != nil {
		return aws.Credentials{}, fmt.Errorf("cached AWS credentials are unreadable: %w", err)
	}
	return aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken,
		Source: "weir web identity", CanExpire: !tok.ExpiresAt.IsZero(), Expires: tok.ExpiresAt}, nil
}

// exchange makes the TokenRequest and the STS call. The STS client is the
// SDK's default for the region, so AWS_ENDPOINT_URL_STS and FIPS or
// dual-stack settings apply as they do for the controller's own calls.
func (w *webIdentity) exchange(ctx context.Context, name, namespace, roleARN string) (auth.Token, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(w.region))
	if err != nil {
		return auth.Token{}, fmt.Errorf("could not load AWS config: %w", err)
	}
	retriever := tokenRetriever(func() ([]byte, error) {
		t, err := w.settings.ServiceAccountToken(ctx, w.id, stsAudience)
		return []byte(t.Value), err
	})
	provider := stscreds.NewWebIdentityRoleProvider(sts.NewFromConfig(cfg), roleARN, retriever,
		func(o *stscreds.WebIdentityRoleOptions) {
			o.RoleSessionName = fmt.Sprintf("%s.%s.%s.fluxcd.io", name, namespace, w.region)
		})
	creds, err := provider.Retrieve(ctx)
	if err != nil {
		return auth.Token{}, fmt.Errorf("failed to assume role '%s' with the web identity of service account '%s/%s': %w",
			roleARN, namespace, name, err)
	}
	value, err := json.Marshal(sessionCredentials{creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken})
	if err != nil {
		return auth.Token{}, err
	}
	return auth.Token{Username: creds.AccessKeyID, Value: string(value), ExpiresAt: creds.Expires}, nil
}

// tokenRetriever is stscreds.IdentityTokenRetriever over a function.
type tokenRetriever func() ([]byte, error)

func (f tokenRetriever) GetIdentityToken() ([]byte, error) { return f() }
