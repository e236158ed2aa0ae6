package createcmd

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/source/sshkey"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

type gitOptions struct {
	url, branch, tag, semver, refName, commit string
	username, password                        string
	secretRef, proxySecretRef                 string
	caFile, privateKeyFile, knownHostsFile    string
	recurseSubmodules, silent                 bool
	ignorePaths, sparseCheckout               []string
	provider                                  *enum
	key                                       sshkey.Options
}

func newGitCommand(e *env) *cobra.Command {
	o := &gitOptions{provider: newEnum("", "git provider", "generic", "azure", "github")}
	cmd := &cobra.Command{
		Use:   "git [name]",
		Short: "Create or update a GitRepository source",
		Long: `The create source git command generates a GitRepository resource and waits for it to sync.
For Git over SSH, an SSH key pair is generated (or read from --private-key-file) and stored in a Kubernetes secret,
with the host keys of --known-hosts-file. For private Git repositories, the basic authentication credentials are
stored in a Kubernetes secret.`,
		Example: `  # Create a source from a public Git repository main branch
  weir create source git podinfo \
    --url=https://github.com/stefanprodan/podinfo \
    --branch=main

  # Create a source for a Git repository over SSH, with a generated deploy key
  weir create source git podinfo \
    --url=ssh://git@github.com/stefanprodan/podinfo \
    --branch=main \
    --known-hosts-file=./known_hosts`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createGit(c, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "git address, e.g. ssh://git@host/org/repository")
	f.StringVar(&o.branch, "branch", "", "git branch")
	f.StringVar(&o.tag, "tag", "", "git tag")
	f.StringVar(&o.semver, "tag-semver", "", "git tag semver range")
	f.StringVar(&o.refName, "ref-name", "", "git reference name")
	f.StringVar(&o.commit, "commit", "", "git commit")
	f.StringVarP(&o.username, "username", "u", "", "basic authentication username")
	f.StringVarP(&o.password, "password", "p", "", "basic authentication password")
	o.key = sshkey.DefaultOptions()
	o.key.BindFlags(cmd.Flags())
	f.StringVar(&o.secretRef, "secret-ref", "", "the name of an existing secret containing SSH or basic credentials or github app authentication")
	f.StringVar(&o.proxySecretRef, "proxy-secret-ref", "", "the name of an existing secret containing the proxy address and credentials")
	f.Var(o.provider, "provider", "the Git provider name")
	f.StringVar(&o.caFile, "ca-file", "", "path to TLS CA file used for validating self-signed certificates")
	f.StringVar(&o.privateKeyFile, "private-key-file", "", "path to a passwordless private key file used for authenticating to the Git SSH server")
	f.StringVar(&o.knownHostsFile, "known-hosts-file", "", "path to a known_hosts file with the SSH server's host keys (weir never scans the host)")
	f.BoolVar(&o.recurseSubmodules, "recurse-submodules", false,
		"when enabled, configures the GitRepository source to initialize and include Git submodules in the artifact it produces")
	f.BoolVarP(&o.silent, "silent", "s", false, "assumes the deploy key is already setup, skips confirmation")
	f.StringSliceVar(&o.ignorePaths, "ignore-paths", nil, "set paths to ignore in git resource (can specify multiple paths with commas: path1,path2)")
	f.StringSliceVar(&o.sparseCheckout, "sparse-checkout-paths", nil,
		"set paths to sparse checkout in git resource (can specify multiple paths with commas: path1,path2)")
	return cmd
}

func ignore(paths []string) *string {
	if len(paths) == 0 {
		return nil
	}
	s := strings.Join(paths, "\n")
	return &s
}

// gitRepository builds the GitRepository the flags describe.
func (e *env) gitRepository(name string, labels map[string]string, o *gitOptions) *sourcev1.GitRepository {
	repo := &sourcev1.GitRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.GitRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: sourcev1.GitRepositorySpec{
			URL:               o.url,
			Interval:          metav1.Duration{Duration: e.o.interval},
			RecurseSubmodules: o.recurseSubmodules,
			Reference:         &sourcev1.GitRepositoryRef{},
			Ignore:            ignore(o.ignorePaths),
			SparseCheckout:    o.sparseCheckout,
			Provider:          o.provider.value,
		},
	}
	if e.o.fetchTimeout > 0 {
		repo.Spec.Timeout = &metav1.Duration{Duration: e.o.fetchTimeout}
	}
	// The flux CLI's precedence: commit (with its branch), ref name,
	// semver, tag, branch.
	ref := repo.Spec.Reference
	switch {
	case o.commit != "":
		ref.Commit, ref.Branch = o.commit, o.branch
	case o.refName != "":
		ref.Name = o.refName
	case o.semver != "":
		ref.SemVer = o.semver
	case o.tag != "":
		ref.Tag = o.tag
	default:
		ref.Branch = o.branch
	}
	if o.secretRef != "" {
		repo.Spec.SecretRef = &meta.LocalObjectReference{Name: o.secretRef}
	}
	if o.proxySecretRef != "" {
		repo.Spec.ProxySecretRef = &meta.LocalObjectReference{Name: o.proxySecretRef}
	}
	return repo
}

func (e *env) createGit(c *cobra.Command, name string, o *gitOptions) error {
	if o.url == "" {
		return fmt.Errorf("url is required")
	}
	u, err := url.Parse(o.url)
	if err != nil {
		return fmt.Errorf("git URL parse failed: %w", err)
	}
	if u.Scheme != "ssh" && u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("git URL scheme '%s' not supported, can be: ssh, http and https", u.Scheme)
	}
	if o.branch == "" && o.tag == "" && o.semver == "" && o.commit == "" && o.refName == "" {
		return fmt.Errorf("a Git ref is required, use one of the following: --branch, --tag, --commit, --ref-name or --tag-semver")
	}
	if o.caFile != "" && u.Scheme == "ssh" {
		return fmt.Errorf("specifying a CA file is not supported for Git over SSH")
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	repo := e.gitRepository(name, labels, o)
	if e.o.export {
		return e.export(repo)
	}

	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	e.p.Generatef("generating GitRepository source")
	if o.secretRef == "" {
		if err := e.gitCredentialsSecret(ctx, cl, repo, u, o); err != nil {
			return err
		}
	}
	ready, err := e.applyAndWait(ctx, cl, kinds.GitRepository, "GitRepository source", repo, "GitRepository source reconciliation completed")
	if err != nil {
		return err
	}
	return e.fetched(ready, "GitRepository source reconciliation completed but no artifact was found")
}

// gitCredentialsSecret applies the Secret the flags' credentials make, if
// any, named after repo, and points repo at it. A generated or given SSH
// key is shown as the deploy key, and unless --silent the user confirms
// having registered it.
func (e *env) gitCredentialsSecret(ctx context.Context, cl client.Client, repo *sourcev1.GitRepository, u *url.URL, o *gitOptions) error {
	secret, err := e.gitSecret(repo.Name, repo.Namespace, repo.Labels, u, gitCredentials{
		username: o.username, password: o.password, caFile: o.caFile,
		privateKeyFile: o.privateKeyFile, knownHostsFile: o.knownHostsFile, key: o.key,
	})
	if err != nil || len(secret.StringData) == 0 {
		return err
	}
	if pub, ok := secret.StringData[sshkey.PublicKeySecretKey]; ok {
		e.p.Generatef("deploy key: %s", pub)
		if !o.silent && !output.Confirm(e.streams.In, e.streams.ErrOut, "Have you added the deploy key to your repository") {
			return fmt.Errorf("aborting")
		}
	}
	e.p.Actionf("applying secret with repository credentials")
	if _, err := apply(ctx, cl, secret); err != nil {
		return err
	}
	repo.Spec.SecretRef = &meta.LocalObjectReference{Name: secret.Name}
	e.p.Successf("authentication configured")
	return nil
}

type ociOptions struct {
	url, tag, semver, digest                     string
	secretRef, serviceAccount, certRef, proxyRef string
	verifySecretRef                              string
	insecure                                     bool
	ignorePaths                                  []string
	provider, verifyProvider                     *enum
	layerMediaType                               string
	layerOperation                               *enum
}

func newOCICommand(e *env) *cobra.Command {
	o := &ociOptions{
		provider:       newEnum("generic", "OCI provider", "generic", "aws", "azure", "gcp"),
		verifyProvider: newEnum("", "verification provider", "cosign", "notation"),
		layerOperation: newEnum("", "layer operation", "extract", "copy"),
	}
	cmd := &cobra.Command{
		Use:   "oci [name]",
		Short: "Create or update an OCIRepository",
		Long:  "The create source oci command generates an OCIRepository resource and waits for it to be ready.",
		Example: `  # Create an OCIRepository for a public container image
  weir create source oci podinfo \
    --url=oci://ghcr.io/stefanprodan/manifests/podinfo \
    --tag=6.1.6 \
    --interval=10m`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createOCI(c, args[0], o) },
	}
	f := cmd.Flags()
	f.Var(o.provider, "provider", "the OCI provider name")
	f.StringVar(&o.url, "url", "", "the OCI repository URL")
	f.StringVar(&o.tag, "tag", "", "the OCI artifact tag")
	f.StringVar(&o.semver, "tag-semver", "", "the OCI artifact tag semver range")
	f.StringVar(&o.digest, "digest", "", "the OCI artifact digest")
	f.StringVar(&o.secretRef, "secret-ref", "", "the name of the Kubernetes image pull secret (type 'kubernetes.io/dockerconfigjson')")
	f.StringVar(&o.serviceAccount, "service-account", "", "the name of the Kubernetes service account that refers to an image pull secret")
	f.StringVar(&o.certRef, "cert-ref", "", "the name of a secret to use for TLS certificates")
	f.StringVar(&o.proxyRef, "proxy-secret-ref", "", "the name of an existing secret containing the proxy address and credentials")
	f.Var(o.verifyProvider, "verify-provider", "the OCI verification provider name")
	f.StringVar(&o.verifySecretRef, "verify-secret-ref", "", "the name of a secret to use for signature verification")
	f.StringSliceVar(&o.ignorePaths, "ignore-paths", nil, "set paths to ignore resources (can specify multiple paths with commas: path1,path2)")
	f.BoolVar(&o.insecure, "insecure", false, "for when connecting to a non-TLS registries over plain HTTP")
	f.StringVar(&o.layerMediaType, "layer-selector-media-type", "",
		"the media type of the layer to pick from the artifact (spec.layerSelector.mediaType); the first layer when omitted")
	f.Var(o.layerOperation, "layer-selector-operation",
		"what to do with the picked layer (spec.layerSelector.operation), available options are: (extract, copy); extract when omitted")
	return cmd
}

func (e *env) createOCI(c *cobra.Command, name string, o *ociOptions) error {
	if o.url == "" {
		return fmt.Errorf("url is required")
	}
	if o.semver == "" && o.tag == "" && o.digest == "" {
		return fmt.Errorf("--tag, --tag-semver or --digest is required")
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	repo := &sourcev1.OCIRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.OCIRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: sourcev1.OCIRepositorySpec{
			Provider:  o.provider.value,
			URL:       o.url,
			Insecure:  o.insecure,
			Interval:  metav1.Duration{Duration: e.o.interval},
			Reference: &sourcev1.OCIRepositoryRef{Digest: o.digest, SemVer: o.semver, Tag: o.tag},
			Ignore:    ignore(o.ignorePaths),
		},
	}
	if e.o.fetchTimeout > 0 {
		repo.Spec.Timeout = &metav1.Duration{Duration: e.o.fetchTimeout}
	}
	repo.Spec.ServiceAccountName = o.serviceAccount
	if o.layerMediaType != "" || o.layerOperation.value != "" {
		repo.Spec.LayerSelector = &sourcev1.OCILayerSelector{MediaType: o.layerMediaType, Operation: o.layerOperation.value}
	}
	if o.secretRef != "" {
		repo.Spec.SecretRef = &meta.LocalObjectReference{Name: o.secretRef}
	}
	if o.certRef != "" {
		repo.Spec.CertSecretRef = &meta.LocalObjectReference{Name: o.certRef}
	}
	if o.proxyRef != "" {
		repo.Spec.ProxySecretRef = &meta.LocalObjectReference{Name: o.proxyRef}
	}
	if o.verifyProvider.value != "" {
		repo.Spec.Verify = &sourcev1.OCIRepositoryVerification{OCIVerification: sourcev1.OCIVerification{Provider: o.verifyProvider.value}}
		if o.verifySecretRef != "" {
			repo.Spec.Verify.SecretRef = &meta.LocalObjectReference{Name: o.verifySecretRef}
		}
	} else if o.verifySecretRef != "" {
		return fmt.Errorf("a verification provider must be specified when a secret is specified")
	}
	if e.o.export {
		return e.export(repo)
	}
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	ready, err := e.applyAndWait(ctx, cl, kinds.OCIRepository, "OCIRepository", repo, "OCIRepository reconciliation completed")
	if err != nil {
		return err
	}
	return e.fetched(ready, "no artifact was found")
}

type bucketOptions struct {
	name, endpoint, accessKey, secretKey, region string
	secretRef, proxyRef                          string
	insecure                                     bool
	ignorePaths                                  []string
	provider                                     *enum
}

func newBucketCommand(e *env) *cobra.Command {
	o := &bucketOptions{provider: newEnum("generic", "bucket provider", "generic", "aws", "azure", "gcp")}
	cmd := &cobra.Command{
		Use:   "bucket [name]",
		Short: "Create or update a Bucket source",
		Long: `The create source bucket command generates a Bucket resource and waits for it to be downloaded.
For Buckets with static authentication, the credentials are stored in a Kubernetes secret.`,
		Example: `  # Create a source for a Bucket using static authentication
  weir create source bucket podinfo \
    --bucket-name=podinfo \
    --endpoint=minio.minio.svc.cluster.local:9000 \
    --insecure=true \
    --access-key=myaccesskey \
    --secret-key=mysecretkey \
    --interval=10m`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createBucket(c, args[0], o) },
	}
	f := cmd.Flags()
	f.Var(o.provider, "provider", "the S3 compatible storage provider name")
	f.StringVar(&o.name, "bucket-name", "", "the bucket name")
	f.StringVar(&o.endpoint, "endpoint", "", "the bucket endpoint address")
	f.StringVar(&o.accessKey, "access-key", "", "the bucket access key")
	f.StringVar(&o.secretKey, "secret-key", "", "the bucket secret key")
	f.StringVar(&o.region, "region", "", "the bucket region")
	f.BoolVar(&o.insecure, "insecure", false, "for when connecting to a non-TLS S3 HTTP endpoint")
	f.StringVar(&o.secretRef, "secret-ref", "", "the name of an existing secret containing credentials")
	f.StringVar(&o.proxyRef, "proxy-secret-ref", "", "the name of an existing secret containing the proxy address and credentials")
	f.StringSliceVar(&o.ignorePaths, "ignore-paths", nil, "set paths to ignore in bucket resource (can specify multiple paths with commas: path1,path2)")
	return cmd
}

func (e *env) createBucket(c *cobra.Command, name string, o *bucketOptions) error {
	if o.name == "" {
		return fmt.Errorf("bucket-name is required")
	}
	if o.endpoint == "" {
		return fmt.Errorf("endpoint is required")
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	ns := e.deps.Namespace()
	bucket := &sourcev1.Bucket{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.BucketKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: sourcev1.BucketSpec{
			BucketName: o.name,
			Provider:   o.provider.value,
			Insecure:   o.insecure,
			Endpoint:   o.endpoint,
			Region:     o.region,
			Interval:   metav1.Duration{Duration: e.o.interval},
			Ignore:     ignore(o.ignorePaths),
		},
	}
	if e.o.fetchTimeout > 0 {
		bucket.Spec.Timeout = &metav1.Duration{Duration: e.o.fetchTimeout}
	}
	if o.secretRef != "" {
		bucket.Spec.SecretRef = &meta.LocalObjectReference{Name: o.secretRef}
	}
	if o.proxyRef != "" {
		bucket.Spec.ProxySecretRef = &meta.LocalObjectReference{Name: o.proxyRef}
	}
	if e.o.export {
		return e.export(bucket)
	}
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	e.p.Generatef("generating Bucket source")
	if o.secretRef == "" && o.accessKey != "" && o.secretKey != "" {
		// The flux CLI's name and keys for the credentials it stores.
		secret := &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "bucket-" + name, Namespace: ns, Labels: labels},
			StringData: map[string]string{"accesskey": o.accessKey, "secretkey": o.secretKey},
		}
		e.p.Actionf("applying secret with the bucket credentials")
		if _, err := apply(ctx, cl, secret); err != nil {
			return err
		}
		bucket.Spec.SecretRef = &meta.LocalObjectReference{Name: secret.Name}
		e.p.Successf("authentication configured")
	}
	ready, err := e.applyAndWait(ctx, cl, kinds.Bucket, "Bucket source", bucket, "Bucket source reconciliation completed")
	if err != nil {
		return err
	}
	return e.fetched(ready, "Bucket source reconciliation completed but no artifact was found")
}

// readFile reads a file a flag names, with the flag in the error.
func readFile(flag, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading --%s: %w", flag, err)
	}
	return data, nil
}
