package checkcmd

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/install"
)

// MinKubernetes is the oldest Kubernetes version weir supports: Flux's
// constraint (>=1.33.0-0).
const MinKubernetes = "1.33.0"

type options struct {
	pre  bool
	poll time.Duration
}

// NewCommand returns `weir check`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check requirements and installation",
		Long: `The check command verifies that the cluster meets weir's requirements
(Kubernetes >=` + MinKubernetes + `) and, without --pre, that the controllers in the
namespace -n names are ready and weir's CRDs are served.`,
		Example: "  # Before installing\n  weir check --pre\n\n  # After installing\n  weir check",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			return run(ctx, o, streams, deps)
		},
	}
	cmd.Flags().BoolVar(&o.pre, "pre", false, "only run pre-installation checks")
	cmd.Flags().DurationVar(&o.poll, "poll-interval", 5*time.Second, "how often the health checker should poll the cluster for the latest state of the resources")
	return cmd
}

func run(ctx context.Context, o *options, streams genericiooptions.IOStreams, deps *clideps.Deps) error {
	p := output.Progress{W: streams.ErrOut}
	p.Actionf("checking prerequisites")
	ok, err := kubernetesVersion(p, deps)
	if err != nil {
		return err
	}
	if o.pre {
		if !ok {
			return &output.ExitError{Code: 1, Err: fmt.Errorf("prerequisites checks failed")}
		}
		p.Successf("prerequisites checks passed")
		return nil
	}
	c, err := deps.Client()
	if err != nil {
		return err
	}
	ns := deps.Namespace()
	p.Actionf("checking version in cluster")
	ok = installedVersion(ctx, p, c) && ok
	p.Actionf("checking controllers")
	ok = controllers(ctx, p, c, ns, o.poll) && ok
	p.Actionf("checking crds")
	ok = crds(ctx, p, c) && ok
	if !ok {
		return &output.ExitError{Code: 1, Err: fmt.Errorf("check failed")}
	}
	p.Successf("all checks passed")
	return nil
}

func kubernetesVersion(p output.Progress, deps *clideps.Deps) (bool, error) {
	dc, err := deps.Kube.ToDiscoveryClient()
	if err != nil {
		return false, fmt.Errorf("loading kubeconfig: %w", err)
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return false, fmt.Errorf("reading the Kubernetes version: %w", err)
	}
	got, err := version.ParseGeneric(info.GitVersion)
	if err != nil {
		return false, fmt.Errorf("parsing the Kubernetes version %q: %w", info.GitVersion, err)
	}
	shown := fmt.Sprintf("%d.%d.%d", got.Major(), got.Minor(), got.Patch())
	if got.LessThan(version.MustParseGeneric(MinKubernetes)) {
		p.Failuref("Kubernetes version %s does not match >=%s-0", shown, MinKubernetes)
		return false, nil
	}
	p.Successf("Kubernetes %s >=%s-0", shown, MinKubernetes)
	return true, nil
}

func installedVersion(ctx context.Context, p output.Progress, c client.Client) bool {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: install.VersionCRD}, &crd); err != nil {
		p.Failuref("no weir installation found: %v", err)
		return false
	}
	v := crd.Labels[meta.VersionLabel]
	if v == "" {
		p.Failuref("no version label on %s", install.VersionCRD)
		return false
	}
	p.Successf("distribution: weir-%s", v)
	bootstrapped, _, err := install.Bootstrapped(ctx, c)
	if err != nil {
		p.Failuref("%v", err)
		return false
	}
	p.Successf("bootstrapped: %t", bootstrapped)
	return true
}

// waitHealthy reads the Deployment's health every poll until it is
// Current or ctx ends (--timeout), as flux check waits, and returns the
// last reading.
func waitHealthy(ctx context.Context, c client.Client, ns, name string, poll time.Duration) install.DeploymentStatus {
	for {
		st := install.DeploymentHealth(ctx, c, ns, name)
		if st.Status == status.CurrentStatus || poll <= 0 {
			return st
		}
		select {
		case <-ctx.Done():
			return st
		case <-time.After(poll):
		}
	}
}

func controllers(ctx context.Context, p output.Progress, c client.Client, ns string, poll time.Duration) bool {
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{meta.PartOfLabel: meta.PartOfValue}); err != nil {
		p.Failuref("listing controllers: %v", err)
		return false
	}
	if len(list.Items) == 0 {
		p.Failuref("no controllers found in %s namespace", ns)
		return false
	}
	ok := true
	for _, d := range list.Items {
		st := waitHealthy(ctx, c, ns, d.Name, poll)
		if st.Status == status.CurrentStatus {
			p.Successf("%s: deployment ready", d.Name)
		} else {
			p.Failuref("%s: deployment not ready: %s", d.Name, st.Message)
			ok = false
		}
		for _, ctr := range d.Spec.Template.Spec.Containers {
			p.Actionf("%s", ctr.Image)
		}
	}
	return ok
}

func crds(ctx context.Context, p output.Progress, c client.Client) bool {
	var list apiextensionsv1.CustomResourceDefinitionList
	if err := c.List(ctx, &list, client.MatchingLabels{meta.PartOfLabel: meta.PartOfValue}); err != nil {
		p.Failuref("listing CRDs: %v", err)
		return false
	}
	if len(list.Items) == 0 {
		p.Failuref("no CRDs found")
		return false
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	ok := true
	for _, crd := range list.Items {
		stored := crd.Status.StoredVersions
		if len(stored) == 0 {
			p.Failuref("%s: no stored version", crd.Name)
			ok = false
			continue
		}
		p.Successf("%s/%s", crd.Name, stored[len(stored)-1])
	}
	return ok
}
