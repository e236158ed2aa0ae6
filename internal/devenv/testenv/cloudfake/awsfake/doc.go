// Package awsfake is a local stand-in for the AWS APIs weir's AWS identity
// calls, speaking them as AWS documents them, for tests on 127.0.0.1:
//
//   - STS (Query API, form-encoded POST): AssumeRoleWithWebIdentity, answered
//     in XML, errors in AWS's XML error shape; and MinIO's
//     AssumeRoleWithLDAPIdentity (LDAPUsername, LDAPPassword checked against
//     LDAPUsers, unsigned), for a Bucket's spec.sts.provider ldap.
//   - ECR and ECR Public (JSON 1.1, X-Amz-Target
//     AmazonEC2ContainerRegistry_V20150921.GetAuthorizationToken and
//     SpencerFrontendService.GetAuthorizationToken): signed with SigV4, whose
//     credential scope (service, region) and access key the fake checks
//     against the credentials it issued.
//   - EKS (REST-JSON, GET /clusters/NAME): DescribeCluster of the clusters
//     AddCluster made, signed for eks with issued credentials; and STS's
//     presigned GET GetCallerIdentity, the URL inside an EKS bearer token,
//     whose SigV4 signature VerifyClusterToken recomputes (it must sign
//     host and x-k8s-aws-id) as EKS's authenticator relies on STS to.
//   - EKS Pod Identity's agent (GET PodIdentityPath, the projected token as
//     the Authorization header, container credentials JSON back): the
//     controller identity SetPodIdentityAs gives the process, its token
//     vetted with a TokenReview; the keys it hands out are issued ones.
//
// Issued answers the secret key and session token of the keys the STS
// issued, for an S3 server that must accept only those (s3server.Options.Keys).
// Every request is recorded for assertions. Env points the AWS SDK at the
// fake (AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL_ECR,
// AWS_ENDPOINT_URL_ECR_PUBLIC), so nothing reaches amazonaws.com.
// RegistryProxy maps an ECR host to a local registry through a
// spec.proxySecretRef-style HTTP proxy, so production code needs no test
// seam for ECR's host names.
package awsfake
