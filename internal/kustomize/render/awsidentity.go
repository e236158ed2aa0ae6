package render

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/weir-gitops/weir/internal/auth"
	authaws "github.com/weir-gitops/weir/internal/auth/aws"
)

// awsWebIdentity returns the AWS credentials of an object-level identity
// for KMS keys in a region, as internal/auth/aws exchanges them for every
// consumer: a TokenRequest for the ServiceAccount (audience
// sts.amazonaws.com) exchanged through STS AssumeRoleWithWebIdentity for
// the role its eks.amazonaws.com/role-arn annotation names, with Flux's
// session name, kept in the settings' cache. The exchange happens when a
// KMS call first needs credentials.
func awsWebIdentity(settings *auth.Settings, id auth.Identity) func(region string) aws.CredentialsProvider {
	return func(region string) aws.CredentialsProvider {
		return aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
			return authaws.Credentials(ctx, settings, id, region)
		})
	}
}
