package aws

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	corev1 "k8s.io/api/core/v1"

	"github.com/weir-gitops/weir/internal/auth"
)

// ProviderName is spec.provider's value for AWS.
const ProviderName = "aws"

// Audience is the audience of the ServiceAccount tokens STS accepts.
const Audience = "sts.amazonaws.com"

// RoleARNAnnotation is the ServiceAccount annotation naming its IAM role,
// the one EKS's IRSA webhook reads.
const RoleARNAnnotation = "eks.amazonaws.com/role-arn"

const roleARNPattern = `^arn:aws[\w-]*:iam::[0-9]{1,30}:role/(.{1,200})$`

// Compiled on first use: bounded repetitions compile to a large program
// that every process would otherwise build at start (design 0038).
var roleARNRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(roleARNPattern) })

// RoleARN reads sa's role annotation, with Flux's error when it is
// missing or malformed.
func RoleARN(sa *corev1.ServiceAccount) (string, error) {
	arn := sa.Annotations[RoleARNAnnotation]
	if !roleARNRegexp().MatchString(arn) {
		return "", fmt.Errorf("invalid %s annotation: '%s'. must match %s", RoleARNAnnotation, arn, roleARNPattern)
	}
	return arn, nil
}

// sessionName is the role session an object's ServiceAccount gets, as
// Flux names it (CloudTrail shows it; trust policies may match it).
func sessionName(sa *corev1.ServiceAccount, region string) string {
	return fmt.Sprintf("%s.%s.%s.fluxcd.io", sa.Name, sa.Namespace, region)
}

// subject is whose credentials a call presents: the controller's, or an
// object's ServiceAccount and the role its annotation names.
type subject struct {
	id      auth.Identity
	sa      *corev1.ServiceAccount
	roleARN string
	// stsEndpoint overrides the STS endpoint when set.
	stsEndpoint string
	// http carries the calls through the object's proxy; nil is the
	// SDK's client.
	http aws.HTTPClient
}

// resolve reads the identity's ServiceAccount and role ARN (none for the
// controller's identity), with Flux's messages.
func resolve(ctx context.Context, s *auth.Settings, id auth.Identity) (subject, error) {
	sub := subject{id: id, http: httpClient(s)}
	if !id.ObjectLevel() {
		return sub, nil
	}
	sa, err := s.ServiceAccount(ctx, id)
	if err != nil {
		return sub, err
	}
	arn, err := RoleARN(sa)
	if err != nil {
		return sub, fmt.Errorf("failed to get provider identity from service account '%s/%s' annotations: %w", sa.Namespace, sa.Name, err)
	}
	sub.sa, sub.roleARN = sa, arn
	return sub, nil
}

// key names the subject in cache keys.
func (sub subject) key() string {
	k := ProviderName + "|" + sub.id.String()
	if sub.roleARN != "" {
		k += "|role=" + sub.roleARN
	}
	return k
}

// Credentials returns the AWS credentials of id for calls in region,
// cached under a key naming the identity, its role and the region.
func Credentials(ctx context.Context, s *auth.Settings, id auth.Identity, region string) (aws.Credentials, error) {
	return CredentialsWithSTS(ctx, s, id, region, "")
}

// CredentialsWithSTS is Credentials with the STS endpoint a Bucket's
// spec.sts names (empty: the SDK's, or AWS_ENDPOINT_URL_STS): the web
// identity exchange of the controller (IRSA) and of a ServiceAccount both
// go there. The endpoint is part of the cache key.
func CredentialsWithSTS(ctx context.Context, s *auth.Settings, id auth.Identity, region, stsEndpoint string) (aws.Credentials, error) {
	sub, err := resolve(ctx, s, id)
	if err != nil {
		return aws.Credentials{}, err
	}
	sub.stsEndpoint = stsEndpoint
	return credentials(ctx, s, sub, region)
}

func credentials(ctx context.Context, s *auth.Settings, sub subject, region string) (aws.Credentials, error) {
	var cache *auth.Cache
	if s != nil {
		cache = s.Cache
	}
	key := sub.key() + "|credentials|region=" + region
	if sub.stsEndpoint != "" {
		key += "|sts=" + sub.stsEndpoint
	}
	t, err := cache.Get(ctx, key, func(ctx context.Context) (auth.Token, error) {
		c, err := exchange(ctx, s, sub, region)
		if err != nil {
			return auth.Token{}, err
		}
		return toToken(c), nil
	})
	if err != nil {
		return aws.Credentials{}, err
	}
	return fromToken(t), nil
}

// exchange gets fresh credentials: the default chain for the controller,
// STS AssumeRoleWithWebIdentity for a ServiceAccount.
func exchange(ctx context.Context, s *auth.Settings, sub subject, region string) (aws.Credentials, error) {
	if sub.sa == nil {
		cfg, err := controllerConfig(ctx, region, sub)
		if err == nil {
			var c aws.Credentials
			if c, err = cfg.Credentials.Retrieve(ctx); err == nil {
				return c, nil
			}
		}
		return aws.Credentials{}, fmt.Errorf("failed to create provider access token for the controller: %w", err)
	}
	token, err := s.ServiceAccountToken(ctx, sub.id, Audience)
	if err != nil {
		return aws.Credentials{}, err
	}
	c, err := assumeRole(ctx, sub, region, token.Value)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("failed to create provider access token for service account '%s/%s': %w", sub.sa.Namespace, sub.sa.Name, err)
	}
	return c, nil
}

// controllerConfig is the SDK's default configuration, on sub's HTTP
// client when it has one; with an STS endpoint, the web identity exchange
// of its credential chain goes there.
func controllerConfig(ctx context.Context, region string, sub subject) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{config.WithRegion(region)}
	if sub.http != nil {
		opts = append(opts, config.WithHTTPClient(sub.http))
	}
	if sub.stsEndpoint != "" {
		client, err := stsClient(ctx, region, sub.stsEndpoint, sub.http)
		if err != nil {
			return aws.Config{}, err
		}
		opts = append(opts, config.WithWebIdentityRoleCredentialOptions(func(o *stscreds.WebIdentityRoleOptions) {
			o.Client = client
		}))
	}
	return config.LoadDefaultConfig(ctx, opts...)
}

// stsClient is an unsigned STS client, at endpoint when set, on hc when
// not nil.
func stsClient(ctx context.Context, region, endpoint string, hc aws.HTTPClient) (*sts.Client, error) {
	opts := []func(*config.LoadOptions) error{config.WithRegion(region), config.WithCredentialsProvider(aws.AnonymousCredentials{})}
	if hc != nil {
		opts = append(opts, config.WithHTTPClient(hc))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("failed to load AWS configuration: %w", err)
	}
	return sts.NewFromConfig(cfg, func(o *sts.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

// assumeRole presents a ServiceAccount token to STS. The call is
// unsigned: the token is the proof.
func assumeRole(ctx context.Context, sub subject, region, webIdentity string) (aws.Credentials, error) {
	client, err := stsClient(ctx, region, sub.stsEndpoint, sub.http)
	if err != nil {
		return aws.Credentials{}, err
	}
	out, err := client.AssumeRoleWithWebIdentity(ctx, &sts.AssumeRoleWithWebIdentityInput{
		RoleArn:          aws.String(sub.roleARN),
		RoleSessionName:  aws.String(sessionName(sub.sa, region)),
		WebIdentityToken: aws.String(webIdentity),
	})
	if err != nil {
		return aws.Credentials{}, err
	}
	c := out.Credentials
	if c == nil || c.AccessKeyId == nil || c.SecretAccessKey == nil || c.SessionToken == nil {
		return aws.Credentials{}, errors.New("STS AssumeRoleWithWebIdentity answered no credentials")
	}
	creds := aws.Credentials{
		AccessKeyID: *c.AccessKeyId, SecretAccessKey: *c.SecretAccessKey, SessionToken: *c.SessionToken,
		Source: "AssumeRoleWithWebIdentity",
	}
	if c.Expiration != nil {
		creds.CanExpire, creds.Expires = true, *c.Expiration
	}
	return creds, nil
}

// httpClient is the SDK's client sending its calls through s's proxy
// (Settings.WithProxy); nil, the SDK's default, without one. The SDK's
// own client type keeps its timeouts and lets it add AWS_CA_BUNDLE.
func httpClient(s *auth.Settings) aws.HTTPClient {
	if s.ProxyFunc() == nil {
		return nil
	}
	return awshttp.NewBuildableClient().WithTransportOptions(s.ProxyTransport)
}

// credentialSep joins the secret key and the session token in a cached
// Token's Value (neither contains a NUL).
const credentialSep = "\x00"

func toToken(c aws.Credentials) auth.Token {
	t := auth.Token{Username: c.AccessKeyID, Value: c.SecretAccessKey + credentialSep + c.SessionToken}
	if c.CanExpire {
		t.ExpiresAt = c.Expires
	}
	return t
}

func fromToken(t auth.Token) aws.Credentials {
	secret, session, _ := strings.Cut(t.Value, credentialSep)
	c := aws.Credentials{AccessKeyID: t.Username, SecretAccessKey: secret, SessionToken: session, Source: "weir token cache"}
	if !t.ExpiresAt.IsZero() {
		c.CanExpire, c.Expires = true, t.ExpiresAt
	}
	return c
}
