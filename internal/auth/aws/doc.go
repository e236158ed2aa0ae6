// Package aws owns AWS identity: the credentials an AWS call presents and
// the ECR logins built from them, as Flux's provider "aws" gets them.
//
//   - The controller's identity is the SDK's default chain: IRSA
//     (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, exchanged with STS
//     AssumeRoleWithWebIdentity), EKS Pod Identity
//     (AWS_CONTAINER_CREDENTIALS_FULL_URI with
//     AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE), static keys, the node.
//   - An object's ServiceAccount names its IAM role in the
//     eks.amazonaws.com/role-arn annotation; a TokenRequest for it with
//     audience sts.amazonaws.com is exchanged with STS
//     AssumeRoleWithWebIdentity, session "<sa>.<namespace>.<region>.fluxcd.io".
//   - ECR (<account>.dkr.ecr.<region>.amazonaws.com and the other
//     partitions) and ECR Public (public.ecr.aws, region us-east-1):
//     GetAuthorizationToken answers a basic-auth pair, user AWS.
//   - Remote EKS clusters: ClusterToken is "k8s-aws-v1." and a presigned
//     STS GetCallerIdentity URL signing x-k8s-aws-id (the cluster's name),
//     valid 15 minutes; DescribeCluster reads the endpoint and CA.
//
// Every credential goes through auth.Cache under a key naming the cloud,
// the identity, the role ARN and the region or registry. Endpoints are the
// SDK's, so AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL_ECR,
// AWS_ENDPOINT_URL_ECR_PUBLIC and AWS_ENDPOINT_URL_EKS point them elsewhere (the tests' fake).
// Errors name the call that failed; none holds a secret key, a session
// token or a registry password.
package aws
