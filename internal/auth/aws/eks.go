package aws

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	signerv4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/weir-gitops/weir/internal/auth"
)

// ClusterHeader is the header an EKS token's presigned request signs:
// the cluster's name, so a token for one cluster is refused by another.
const ClusterHeader = "x-k8s-aws-id"

// ClusterTokenPrefix starts every EKS bearer token.
const ClusterTokenPrefix = "k8s-aws-v1."

// clusterTokenLifetime is how long EKS accepts a token: the presigned
// request's 15 minutes (X-Amz-Expires 900).
const clusterTokenLifetime = 15 * time.Minute

const clusterPattern = `^arn:aws[\w-]*:eks:([^:]{1,100}):[0-9]{1,30}:cluster/(.{1,200})$`

// Compiled on first use: bounded repetitions compile to a large program
// that every process would otherwise build at start (design 0038).
var clusterRegexp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(clusterPattern) })

// ParseCluster reads an EKS cluster ARN: its region and name, with Flux's
// message when it is not one.
func ParseCluster(arn string) (region, name string, err error) {
	m := clusterRegexp().FindStringSubmatch(arn)
	if m == nil {
		return "", "", fmt.Errorf("invalid EKS cluster ARN: '%s'. must match %s", arn, clusterPattern)
	}
	return m[1], m[2], nil
}

// ClusterToken returns id's bearer token for the EKS cluster arn, the
// one aws-iam-authenticator and `aws eks get-token` make: "k8s-aws-v1."
// and the base64url of an STS GetCallerIdentity URL presigned with id's
// credentials (from the cluster's region), whose signed headers include
// x-k8s-aws-id with the cluster's name. EKS calls that URL to learn who
// the caller is. It is cached under the identity, its role and the
// cluster for four fifths of its 15 minutes.
func ClusterToken(ctx context.Context, s *auth.Settings, id auth.Identity, arn string) (auth.Token, error) {
	region, name, err := ParseCluster(arn)
	if err != nil {
		return auth.Token{}, err
	}
	sub, err := resolve(ctx, s, id)
	if err != nil {
		return auth.Token{}, err
	}
	var cache *auth.Cache
	if s != nil {
		cache = s.Cache
	}
	return cache.Get(ctx, sub.key()+"|eks-token|cluster="+arn, func(ctx context.Context) (auth.Token, error) {
		expires := time.Now().Add(clusterTokenLifetime)
		cfg, err := subjectConfig(ctx, s, sub, region)
		if err != nil {
			return auth.Token{}, err
		}
		// The default presigner is set once the client's options are
		// applied: wrap it in the call's.
		req, err := sts.NewPresignClient(sts.NewFromConfig(cfg)).PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{},
			func(o *sts.PresignOptions) { o.Presigner = clusterPresigner{next: o.Presigner, cluster: name} })
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to presign STS GetCallerIdentity request: %w", err)
		}
		return auth.Token{Value: ClusterTokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(req.URL)), ExpiresAt: expires}, nil
	})
}

// clusterPresigner adds the cluster's name and the 15 minutes to the
// request it presigns.
type clusterPresigner struct {
	next    sts.HTTPPresignerV4
	cluster string
}

func (p clusterPresigner) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	signingTime time.Time, optFns ...func(*signerv4.SignerOptions)) (string, http.Header, error) {
	r.Header.Set(ClusterHeader, p.cluster)
	q := r.URL.Query()
	q.Set("X-Amz-Expires", fmt.Sprint(int(clusterTokenLifetime.Seconds())))
	r.URL.RawQuery = q.Encode()
	return p.next.PresignHTTP(ctx, creds, r, payloadHash, service, region, signingTime, optFns...)
}

// Cluster is a remote cluster's API server, as its cloud describes it.
type Cluster struct {
	// Endpoint is the API server's URL.
	Endpoint string
	// CA is the PEM of the API server's certificate authority.
	CA []byte
}

// DescribeCluster asks EKS (DescribeCluster, signed with id's
// credentials from the cluster's region) for the endpoint and CA of the
// cluster arn. The answer is cached like a token, for the cache's
// maximum duration.
func DescribeCluster(ctx context.Context, s *auth.Settings, id auth.Identity, arn string) (Cluster, error) {
	region, name, err := ParseCluster(arn)
	if err != nil {
		return Cluster{}, err
	}
	sub, err := resolve(ctx, s, id)
	if err != nil {
		return Cluster{}, err
	}
	var cache *auth.Cache
	if s != nil {
		cache = s.Cache
	}
	t, err := cache.Get(ctx, sub.key()+"|eks-describe|cluster="+arn, func(ctx context.Context) (auth.Token, error) {
		cfg, err := subjectConfig(ctx, s, sub, region)
		if err != nil {
			return auth.Token{}, err
		}
		out, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)})
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to describe EKS cluster '%s': %w", arn, err)
		}
		c := out.Cluster
		if c == nil || c.Endpoint == nil || c.CertificateAuthority == nil || c.CertificateAuthority.Data == nil {
			return auth.Token{}, fmt.Errorf("failed to describe EKS cluster '%s': the answer has no endpoint or certificate authority", arn)
		}
		ca, err := base64.StdEncoding.DecodeString(*c.CertificateAuthority.Data)
		if err != nil {
			return auth.Token{}, fmt.Errorf("failed to decode EKS CA certificate: %w", err)
		}
		return auth.Token{Username: *c.Endpoint, Value: string(ca)}, nil
	})
	if err != nil {
		return Cluster{}, err
	}
	if t.Username == "" {
		return Cluster{}, errors.New("failed to describe EKS cluster: empty endpoint")
	}
	return Cluster{Endpoint: t.Username, CA: []byte(t.Value)}, nil
}

// signedConfig is the SDK's configuration for region with creds: its
// endpoints are the SDK's (AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL_EKS).
func signedConfig(ctx context.Context, region string, creds aws.Credentials, hc aws.HTTPClient) (aws.Config, error) {
	opts := []func(*config.LoadOptions) error{config.WithRegion(region),
		config.WithCredentialsProvider(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return creds, nil }))}
	if hc != nil {
		opts = append(opts, config.WithHTTPClient(hc))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("failed to load AWS configuration: %w", err)
	}
	return cfg, nil
}

// subjectConfig is signedConfig with sub's credentials for region.
func subjectConfig(ctx context.Context, s *auth.Settings, sub subject, region string) (aws.Config, error) {
	creds, err := credentials(ctx, s, sub, region)
	if err != nil {
		return aws.Config{}, err
	}
	return signedConfig(ctx, region, creds, sub.http)
}
