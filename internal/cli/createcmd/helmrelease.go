package createcmd

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// The kinds `create helmrelease` accepts for --chart-ref and --values-from
// (--source takes chartSourceKinds, as `create source chart`).
var (
	chartRefKinds   = []string{"OCIRepository", "HelmChart"}
	valuesFromKinds = []string{"Secret", "ConfigMap"}
)

// kindRef is a reference whose kind must be given: Kind/name[.namespace].
// noun names it in a format error, what in a kind error.
type kindRef struct {
	sourceRef
	noun, what string
	allowed    []string
}

func (r *kindRef) Type() string { return "string" }

func (r *kindRef) Set(s string) error {
	if !strings.Contains(s, "/") {
		return fmt.Errorf("invalid %s '%s', must be in format <kind>/<name>", r.noun, s)
	}
	ref, err := parseSourceRef(s, r.what, "", r.allowed)
	if err != nil {
		return err
	}
	r.sourceRef = ref
	return nil
}

type helmReleaseOptions struct {
	releaseName, chart, chartVersion string
	source, chartRef                 kindRef
	dependsOn                        []string
	targetNamespace                  string
	storageNamespace                 string
	createNamespace                  bool
	valuesFiles, valuesFrom          []string
	serviceAccount                   string
	crds                             *enum
	reconcileStrategy                string
	chartInterval                    time.Duration
	kubeConfigSecretRef              string
}

func newHelmReleaseCommand(e *env) *cobra.Command {
	o := &helmReleaseOptions{
		source:   kindRef{noun: "helm chart source", what: "source", allowed: chartSourceKinds},
		chartRef: kindRef{noun: "chart reference", what: "chart reference", allowed: chartRefKinds},
		crds: newEnum("", "CRDs policy",
			string(helmv2.Skip), string(helmv2.Create), string(helmv2.CreateReplace)),
	}
	cmd := &cobra.Command{
		Use:     "helmrelease [name]",
		Aliases: []string{"hr"},
		Short:   "Create or update a HelmRelease resource",
		Long:    "The helmrelease create command generates a HelmRelease resource for a given HelmRepository source.",
		Example: `  # Create a HelmRelease with a chart from a HelmRepository source
  weir create hr podinfo \
    --interval=10m \
    --source=HelmRepository/podinfo \
    --chart=podinfo \
    --chart-version=">4.0.0"

  # Create a HelmRelease with a chart from a GitRepository source
  weir create hr podinfo \
    --source=GitRepository/podinfo \
    --chart=./charts/podinfo

  # Create a HelmRelease from an OCIRepository holding the chart
  weir create hr podinfo \
    --chart-ref=OCIRepository/podinfo.flux-system

  # Create a HelmRelease with values from local files and a Secret
  weir create hr podinfo \
    --source=HelmRepository/podinfo \
    --chart=podinfo \
    --values=./values.yaml \
    --values=./values-prod.yaml \
    --values-from=Secret/podinfo-values

  # Write the HelmRelease to a file instead of applying it
  weir create hr podinfo \
    --source=HelmRepository/podinfo \
    --chart=podinfo \
    --export > podinfo-release.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createHelmRelease(c, args[0], o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.releaseName, "release-name", "", "name used for the Helm release, defaults to a composition of '[<target-namespace>-]<HelmRelease-name>'")
	f.Var(&o.source, "source", "source that contains the chart in the format '<kind>/<name>.<namespace>', where kind must be one of: (HelmRepository, GitRepository, Bucket)")
	f.StringVar(&o.chart, "chart", "", "Helm chart name or path")
	f.StringVar(&o.chartVersion, "chart-version", "", "Helm chart version, accepts a semver range (ignored for charts from GitRepository sources)")
	f.Var(&o.chartRef, "chart-ref", "Helm chart reference in the format '<kind>/<name>.<namespace>', where kind must be one of: (OCIRepository, HelmChart)")
	f.StringSliceVar(&o.dependsOn, "depends-on", nil, "HelmReleases that must be ready before this release can be installed, supported formats '<name>' and '<namespace>/<name>'")
	f.StringVar(&o.targetNamespace, "target-namespace", "", "namespace to install this release, defaults to the HelmRelease namespace")
	f.StringVar(&o.storageNamespace, "storage-namespace", "", "namespace to store the Helm release, defaults to the target namespace")
	f.BoolVar(&o.createNamespace, "create-target-namespace", false, "create the target namespace if it does not exist")
	f.StringVar(&o.serviceAccount, "service-account", "", "the name of the service account to impersonate when reconciling this HelmRelease")
	f.StringVar(&o.reconcileStrategy, "reconcile-strategy", "ChartVersion", "the reconcile strategy for helm chart created by the helm release(accepted values: Revision and ChartRevision)")
	f.DurationVar(&o.chartInterval, "chart-interval", 0, "the interval of which to check for new chart versions")
	f.StringSliceVar(&o.valuesFiles, "values", nil, "local path to values.yaml files, also accepts comma-separated values")
	f.StringSliceVar(&o.valuesFrom, "values-from", nil, "a Kubernetes object reference that contains the values.yaml data key in the format '<kind>/<name>', where kind must be one of: (Secret,ConfigMap)")
	f.Var(o.crds, "crds", "upgrade CRDs policy, available options are: (Skip, Create, CreateReplace)")
	f.StringVar(&o.kubeConfigSecretRef, "kubeconfig-secret-ref", "", "the name of the Kubernetes Secret that contains a key with the kubeconfig file for connecting to a remote cluster")
	return cmd
}

// helmRelease builds the HelmRelease the flags describe, in the shape the
// flux CLI writes.
func (e *env) helmRelease(name string, labels map[string]string, o *helmReleaseOptions) (*helmv2.HelmRelease, error) {
	hr := &helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: helmv2.HelmReleaseSpec{
			ReleaseName:        o.releaseName,
			DependsOn:          dependsOn(o.dependsOn),
			Interval:           metav1.Duration{Duration: e.o.interval},
			TargetNamespace:    o.targetNamespace,
			StorageNamespace:   o.storageNamespace,
			ServiceAccountName: o.serviceAccount,
		},
	}
	if o.chart != "" {
		hr.Spec.Chart = &helmv2.HelmChartTemplate{Spec: helmv2.HelmChartTemplateSpec{
			Chart:   o.chart,
			Version: o.chartVersion,
			SourceRef: helmv2.CrossNamespaceObjectReference{
				Kind: o.source.kind, Name: o.source.name, Namespace: o.source.namespace,
			},
			ReconcileStrategy: o.reconcileStrategy,
		}}
		if o.chartInterval > 0 {
			hr.Spec.Chart.Spec.Interval = &metav1.Duration{Duration: o.chartInterval}
		}
	} else {
		hr.Spec.ChartRef = &helmv2.CrossNamespaceSourceReference{
			Kind: o.chartRef.kind, Name: o.chartRef.name, Namespace: o.chartRef.namespace,
		}
	}
	if o.kubeConfigSecretRef != "" {
		hr.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: o.kubeConfigSecretRef}}
	}
	if o.createNamespace {
		hr.Spec.Install = &helmv2.Install{CreateNamespace: true}
	}
	// As the flux CLI: --crds sets the upgrade policy; installs create.
	if o.crds.value != "" {
		if hr.Spec.Install == nil {
			hr.Spec.Install = &helmv2.Install{}
		}
		hr.Spec.Install.CRDs = helmv2.Create
		hr.Spec.Upgrade = &helmv2.Upgrade{CRDs: helmv2.CRDsPolicy(o.crds.value)}
	}
	values, err := valuesFiles(o.valuesFiles)
	if err != nil {
		return nil, err
	}
	hr.Spec.Values = values
	if hr.Spec.ValuesFrom, err = valuesFrom(o.valuesFrom); err != nil {
		return nil, err
	}
	return hr, nil
}

// valuesFiles merges the --values files in order, later ones winning.
func valuesFiles(files []string) (*helmv2.Values, error) {
	if len(files) == 0 {
		return nil, nil
	}
	merged := map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading values from %s failed: %w", f, err)
		}
		values := map[string]any{}
		if err := yaml.Unmarshal(data, &values); err != nil {
			return nil, fmt.Errorf("converting values to JSON from %s failed: %w", f, err)
		}
		merged = loader.MergeMaps(merged, values)
	}
	raw, err := json.Marshal(merged)
	if err != nil {
		return nil, fmt.Errorf("marshaling values failed: %w", err)
	}
	return &helmv2.Values{Raw: raw}, nil
}

// valuesFrom parses --values-from: Kind/name, Kind one of Secret and
// ConfigMap, matched ignoring case.
func valuesFrom(refs []string) ([]helmv2.ValuesReference, error) {
	var out []helmv2.ValuesReference
	for _, r := range refs {
		kind, name, ok := strings.Cut(r, "/")
		if !ok || kind == "" || name == "" {
			return nil, fmt.Errorf("invalid Kubernetes object reference '%s', must be in format <kind>/<name>", r)
		}
		found := ""
		for _, k := range valuesFromKinds {
			if strings.EqualFold(k, kind) {
				found = k
			}
		}
		if found == "" {
			return nil, fmt.Errorf("reference kind '%s' is not supported, must be one of: %s", kind, strings.Join(valuesFromKinds, ", "))
		}
		out = append(out, helmv2.ValuesReference{Kind: found, Name: name})
	}
	return out, nil
}

func (o *helmReleaseOptions) validate() error {
	switch {
	case o.chart == "" && o.chartRef.name == "":
		return fmt.Errorf("chart or chart-ref is required")
	case o.chart != "" && o.chartRef.name != "":
		return fmt.Errorf("cannot use --chart in combination with --chart-ref")
	case o.chart != "" && o.source.name == "":
		return fmt.Errorf("source is required when using --chart")
	case o.reconcileStrategy != "ChartVersion" && o.reconcileStrategy != "Revision":
		return fmt.Errorf("'%s' is an invalid reconcile strategy(valid: Revision, ChartVersion)", o.reconcileStrategy)
	}
	return nil
}

func (e *env) createHelmRelease(c *cobra.Command, name string, o *helmReleaseOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	if !e.o.export {
		e.p.Generatef("generating HelmRelease")
	}
	hr, err := e.helmRelease(name, labels, o)
	if err != nil {
		return err
	}
	if e.o.export {
		return e.export(hr)
	}
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	ready, err := e.applyAndWait(ctx, cl, kinds.HelmRelease, "HelmRelease", hr, fmt.Sprintf("HelmRelease %s is ready", name))
	if err != nil {
		return err
	}
	rev, _, _ := unstructured.NestedString(ready.Object, "status", "lastAttemptedRevision")
	e.p.Successf("applied revision %s", rev)
	return nil
}
