package aws

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/ecrpublic"

	"github.com/weir-gitops/weir/internal/auth"
)

// RegistryLogin returns the basic-auth pair (Username is AWS) with which
// id pulls from the ECR registry at host. The host's region is where the
// credentials and the token come from, so the controller needs no
// AWS_REGION for registries (the node's identity works too). Errors are
// Flux's: an invalid host as is; the identity's under "failed to get
// access token for artifact registry"; ECR's under "failed to create
// artifact registry credentials".
func RegistryLogin(ctx context.Context, s *auth.Settings, id auth.Identity, host string) (auth.Token, error) {
	reg, err := ParseRegistry(host)
	if err != nil {
		return auth.Token{}, err
	}
	sub, err := resolve(ctx, s, id)
	if err != nil {
		return auth.Token{}, fmt.Errorf("failed to get access token for artifact registry: %w", err)
	}
	var cache *auth.Cache
	if s != nil {
		cache = s.Cache
	}
	return cache.Get(ctx, sub.key()+"|ecr|registry="+reg.key(), func(ctx context.Context) (auth.Token, error) {
		creds, err := credentials(ctx, s, sub, reg.Region)
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to get access token for artifact registry: %w", err)
		}
		t, err := authorizationToken(ctx, reg, creds, sub.http)
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to create artifact registry credentials: %w", err)
		}
		return t, nil
	})
}

// authorizationToken calls ECR's (or ECR Public's) GetAuthorizationToken
// signed with creds, on hc when not nil.
func authorizationToken(ctx context.Context, reg Registry, creds aws.Credentials, hc aws.HTTPClient) (auth.Token, error) {
	cfg, err := signedConfig(ctx, reg.Region, creds, hc)
	if err != nil {
		return auth.Token{}, err
	}
	var encoded *string
	var expires *time.Time
	if reg.Public {
		out, err := ecrpublic.NewFromConfig(cfg).GetAuthorizationToken(ctx, &ecrpublic.GetAuthorizationTokenInput{})
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to get ECR Public authorization token: %w", err)
		}
		if out.AuthorizationData != nil {
			encoded, expires = out.AuthorizationData.AuthorizationToken, out.AuthorizationData.ExpiresAt
		}
	} else {
		out, err := ecr.NewFromConfig(cfg).GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to get ECR authorization token: %w", err)
		}
		if len(out.AuthorizationData) > 0 {
			encoded, expires = out.AuthorizationData[0].AuthorizationToken, out.AuthorizationData[0].ExpiresAt
		}
	}
	return decodeAuthorization(encoded, expires)
}

// decodeAuthorization reads base64("<user>:<password>") and its expiry.
func decodeAuthorization(encoded *string, expires *time.Time) (auth.Token, error) {
	switch {
	case encoded == nil:
		return auth.Token{}, errors.New("no authorization data returned")
	case expires == nil:
		return auth.Token{}, errors.New("authorization token expiration is nil")
	}
	b, err := base64.StdEncoding.DecodeString(*encoded)
	if err != nil {
		// The decoding error names a byte offset, never the token.
		return auth.Token{}, fmt.Errorf("failed to parse authorization token: %w", err)
	}
	user, pass, ok := strings.Cut(string(b), ":")
	if !ok || strings.Contains(pass, ":") {
		return auth.Token{}, errors.New("invalid authorization token format")
	}
	return auth.Token{Username: user, Value: pass, ExpiresAt: *expires}, nil
}
