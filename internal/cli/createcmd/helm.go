package createcmd

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/weir-gitops/weir/api/meta"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/source/git"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// The keys `create source helm` stores TLS files under: the flux CLI still
// writes the HelmRepository secretRef's legacy key names, which
// source-controller reads beside ca.crt, tls.crt and tls.key.
const (
	helmSecretCAFile   = "caFile"
	helmSecretCertFile = "certFile"
	helmSecretKeyFile  = "keyFile"
)

type helmOptions struct {
	url, username, password   string
	certFile, keyFile, caFile string
	secretRef, ociProvider    string
	passCredentials           bool
}

func newHelmCommand(e *env) *cobra.Command {
	o := &helmOptions{}
	cmd := &cobra.Command{
		Use:   "helm [name]",
		Short: "Create or update a HelmRepository source",
		Long: `The create source helm command generates a HelmRepository resource and waits for it to fetch the index.
For private Helm repositories, the basic authentication credentials are stored in a Kubernetes secret.`,
		Example: `  # Create a source for an HTTPS public Helm repository
  weir create source helm podinfo \
    --url=https://stefanprodan.github.io/podinfo \
    --interval=10m

  # Create a source for an HTTPS Helm repository using basic authentication
  weir create source helm podinfo \
    --url=https://stefanprodan.github.io/podinfo \
    --username=username \
    --password=password

  # Create a source for an HTTPS Helm repository using TLS authentication
  weir create source helm podinfo \
    --url=https://stefanprodan.github.io/podinfo \
    --cert-file=./cert.crt \
    --key-file=./key.crt \
    --ca-file=./ca.crt

  # Create a source for an OCI Helm repository using an existing secret with basic auth or dockerconfig credentials
  weir create source helm podinfo \
    --url=oci://ghcr.io/stefanprodan/charts/podinfo \
    --secret-ref=docker-config`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createHelm(c, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "Helm repository address")
	f.StringVarP(&o.username, "username", "u", "", "basic authentication username")
	f.StringVarP(&o.password, "password", "p", "", "basic authentication password")
	f.StringVar(&o.certFile, "cert-file", "", "TLS authentication cert file path")
	f.StringVar(&o.keyFile, "key-file", "", "TLS authentication key file path")
	f.StringVar(&o.caFile, "ca-file", "", "TLS authentication CA file path")
	f.StringVar(&o.secretRef, "secret-ref", "", "the name of an existing secret containing TLS, basic auth or docker-config credentials")
	f.StringVar(&o.ociProvider, "oci-provider", "", "OCI provider for authentication")
	f.BoolVar(&o.passCredentials, "pass-credentials", false, "pass credentials to all domains")
	return cmd
}

// helmRepository builds the HelmRepository the flags describe: an oci://
// URL makes it of type oci, the only type --oci-provider applies to.
func (e *env) helmRepository(name string, labels map[string]string, u *url.URL, o *helmOptions) *sourcev1.HelmRepository {
	repo := &sourcev1.HelmRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.HelmRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: sourcev1.HelmRepositorySpec{
			URL:      o.url,
			Interval: metav1.Duration{Duration: e.o.interval},
		},
	}
	if u.Scheme == sourcev1.HelmRepositoryTypeOCI {
		repo.Spec.Type = sourcev1.HelmRepositoryTypeOCI
		repo.Spec.Provider = o.ociProvider
	}
	if e.o.fetchTimeout > 0 {
		repo.Spec.Timeout = &metav1.Duration{Duration: e.o.fetchTimeout}
	}
	if o.secretRef != "" {
		repo.Spec.SecretRef = &meta.LocalObjectReference{Name: o.secretRef}
		repo.Spec.PassCredentials = o.passCredentials
	}
	return repo
}

func (e *env) createHelm(c *cobra.Command, name string, o *helmOptions) error {
	if o.url == "" {
		return fmt.Errorf("url is required")
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	u, err := url.Parse(o.url)
	if err != nil {
		return fmt.Errorf("url parse failed: %w", err)
	}
	switch u.Scheme {
	case "http", "https", sourcev1.HelmRepositoryTypeOCI:
	default:
		return fmt.Errorf("url scheme '%s' not supported, can be: http, https and oci", u.Scheme)
	}
	repo := e.helmRepository(name, labels, u, o)
	if e.o.export {
		return e.export(repo)
	}
	secret, err := helmSecret("helm-"+name, repo.Namespace, o)
	if err != nil {
		return err
	}

	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	e.p.Generatef("generating HelmRepository source")
	if o.secretRef == "" && len(secret.StringData) > 0 {
		e.p.Actionf("applying secret with repository credentials")
		if _, err := apply(ctx, cl, secret); err != nil {
			return err
		}
		repo.Spec.SecretRef = &meta.LocalObjectReference{Name: secret.Name}
		repo.Spec.PassCredentials = o.passCredentials
		e.p.Successf("authentication configured")
	}
	const noun = "HelmRepository source"
	ready, err := e.applyAndWaitAs(ctx, cl, kinds.HelmRepository, createNames{
		noun: noun, created: "source", completed: noun + " reconciliation completed",
	}, repo)
	if err != nil {
		return err
	}
	if repo.Spec.Type == sourcev1.HelmRepositoryTypeOCI {
		// An OCI HelmRepository is static: it has no artifact to report.
		return nil
	}
	return e.fetched(ready, noun+" reconciliation completed but no artifact was found")
}

// helmSecret builds the credentials Secret of `create source helm`: basic
// auth when both username and password are given, the CA file, and the
// client certificate when both its files are given. A Secret without data
// is not applied.
func helmSecret(name, ns string, o *helmOptions) (*corev1.Secret, error) {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		StringData: map[string]string{},
	}
	if o.username != "" && o.password != "" {
		s.StringData[git.SecretUsername] = o.username
		s.StringData[git.SecretPassword] = o.password
	}
	if o.caFile != "" {
		ca, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, fmt.Errorf("unable to read TLS CA file: %w", err)
		}
		s.StringData[helmSecretCAFile] = string(ca)
	}
	if o.certFile != "" && o.keyFile != "" {
		crt, err := os.ReadFile(o.certFile)
		if err != nil {
			return nil, fmt.Errorf("failed to read cert file: %w", err)
		}
		key, err := os.ReadFile(o.keyFile)
		if err != nil {
			return nil, fmt.Errorf("failed to read key file: %w", err)
		}
		s.StringData[helmSecretCertFile], s.StringData[helmSecretKeyFile] = string(crt), string(key)
	}
	return s, nil
}

// chartSourceKinds are the kinds a HelmChart's --source may name, in the
// flux CLI's order.
var chartSourceKinds = []string{sourcev1.HelmRepositoryKind, sourcev1.GitRepositoryKind, sourcev1.BucketKind}

// chartSource is --source of `create source chart`: Kind/name, the kind
// matched ignoring case and written as the API spells it.
type chartSource struct{ kind, name string }

func (s *chartSource) String() string {
	if s.name == "" {
		return ""
	}
	return s.kind + "/" + s.name
}

func (s *chartSource) Type() string { return "helmChartSource" }

func (s *chartSource) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("no helm chart source given, please specify %s", chartSourceUsage)
	}
	kind, name, _ := strings.Cut(v, "/")
	if kind == "" || name == "" {
		return fmt.Errorf("invalid helm chart source '%s', must be in format <kind>/<name>", v)
	}
	for _, k := range chartSourceKinds {
		if strings.EqualFold(k, kind) {
			s.kind, s.name = k, name
			return nil
		}
	}
	return fmt.Errorf("source kind '%s' is not supported, must be one of: %s", kind, strings.Join(chartSourceKinds, ", "))
}

var chartSourceUsage = "source that contains the chart in the format '<kind>/<name>', where kind must be one of: (" +
	strings.Join(chartSourceKinds, ", ") + ")"

// chartVerifyProvider is --verify-provider of `create source chart`: only
// cosign, with the flux CLI's message for anything else.
type chartVerifyProvider string

func (p *chartVerifyProvider) String() string { return string(*p) }
func (p *chartVerifyProvider) Type() string   { return "sourceOCIVerifyProvider" }
func (p *chartVerifyProvider) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("no source OCI verify provider given, please specify the OCI verify provider name")
	}
	if v != "cosign" {
		return fmt.Errorf("source OCI verify provider '%s' is not supported, must be one of: cosign", v)
	}
	*p = chartVerifyProvider(v)
	return nil
}

type chartOptions struct {
	chart, version, reconcileStrategy string
	source                            chartSource
	verifyProvider                    chartVerifyProvider
	verifySecretRef                   string
	verifyIssuer, verifySubject       string
}

func newChartCommand(e *env) *cobra.Command {
	o := &chartOptions{}
	cmd := &cobra.Command{
		Use:   "chart [name]",
		Short: "Create or update a HelmChart source",
		Long:  "The create source chart command generates a HelmChart resource and waits for the chart to be available.",
		Example: `  # Create a source for a chart residing in a HelmRepository
  weir create source chart podinfo \
    --source=HelmRepository/podinfo \
    --chart=podinfo \
    --chart-version=6.x

  # Create a source for a chart residing in a Git repository
  weir create source chart podinfo \
    --source=GitRepository/podinfo \
    --chart=./charts/podinfo`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createChart(c, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.chart, "chart", "", "Helm chart name or path")
	f.StringVar(&o.version, "chart-version", "", "Helm chart version, accepts a semver range (ignored for charts from GitRepository sources)")
	f.Var(&o.source, "source", chartSourceUsage)
	f.StringVar(&o.reconcileStrategy, "reconcile-strategy", sourcev1.ReconcileStrategyChartVersion,
		"the reconcile strategy for helm chart (accepted values: Revision and ChartRevision)")
	f.Var(&o.verifyProvider, "verify-provider", "the OCI verify provider name to use for signature verification, available options are: (cosign)")
	f.StringVar(&o.verifySecretRef, "verify-secret-ref", "", "the name of a secret to use for signature verification")
	f.StringVar(&o.verifySubject, "verify-subject", "", "regular expression to use for the OIDC subject during signature verification")
	f.StringVar(&o.verifyIssuer, "verify-issuer", "", "regular expression to use for the OIDC issuer during signature verification")
	return cmd
}

// helmChart builds the HelmChart the flags describe.
func (e *env) helmChart(name string, labels map[string]string, o *chartOptions) (*sourcev1.HelmChart, error) {
	chart := &sourcev1.HelmChart{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.HelmChartKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: sourcev1.HelmChartSpec{
			Chart:             o.chart,
			Version:           o.version,
			Interval:          metav1.Duration{Duration: e.o.interval},
			ReconcileStrategy: o.reconcileStrategy,
			SourceRef:         sourcev1.LocalHelmChartSourceReference{Kind: o.source.kind, Name: o.source.name},
		},
	}
	switch {
	case o.verifyProvider != "":
		v := &sourcev1.OCIVerification{Provider: string(o.verifyProvider)}
		if o.verifySecretRef != "" {
			v.SecretRef = &meta.LocalObjectReference{Name: o.verifySecretRef}
		}
		if o.verifyIssuer != "" || o.verifySubject != "" {
			v.MatchOIDCIdentity = []sourcev1.OIDCIdentityMatch{{Issuer: o.verifyIssuer, Subject: o.verifySubject}}
		}
		chart.Spec.Verify = v
	case o.verifySecretRef != "":
		return nil, fmt.Errorf("a verification provider must be specified when a secret is specified")
	case o.verifyIssuer != "" || o.verifySubject != "":
		return nil, fmt.Errorf("a verification provider must be specified when OIDC issuer/subject is specified")
	}
	return chart, nil
}

func (e *env) createChart(c *cobra.Command, name string, o *chartOptions) error {
	if o.source.kind == "" || o.source.name == "" {
		return fmt.Errorf("chart source is required")
	}
	if o.chart == "" {
		return fmt.Errorf("chart name or path is required")
	}
	// The flux CLI says so before anything else, --export included.
	e.p.Generatef("generating HelmChart source")
	labels, err := e.labels()
	if err != nil {
		return err
	}
	chart, err := e.helmChart(name, labels, o)
	if err != nil {
		return err
	}
	if e.o.export {
		return e.export(chart)
	}
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	const noun = "HelmChart source"
	ready, err := e.applyAndWaitAs(ctx, cl, kinds.HelmChart, createNames{
		noun: noun, created: "source", completed: noun + " reconciliation completed",
	}, chart)
	if err != nil {
		return err
	}
	return e.fetched(ready, noun+" reconciliation completed but no artifact was found")
}

// createNames are the words of the create sequence for one kind (see
// applyAndWaitAs).
type createNames struct {
	// noun names the object in "applying …" and "waiting for …
	// reconciliation": "HelmRepository source".
	noun string
	// created names it in "… created" / "… updated": the flux CLI says
	// just "source" for Helm sources.
	created string
	// completed is the line printed once it is ready.
	completed string
}
