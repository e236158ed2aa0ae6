package statscmd

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	imagev1 "github.com/weir-gitops/weir/api/image/v1"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	notificationv1 "github.com/weir-gitops/weir/api/notification/v1"
	notificationv1beta3 "github.com/weir-gitops/weir/api/notification/v1beta3"
	sourcev1 "github.com/weir-gitops/weir/api/source/v1"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// Counted lists the kinds the report covers, in the flux CLI's order.
var Counted = []schema.GroupVersionKind{
	sourcev1.GroupVersion.WithKind(sourcev1.GitRepositoryKind),
	sourcev1.GroupVersion.WithKind(sourcev1.OCIRepositoryKind),
	sourcev1.GroupVersion.WithKind(sourcev1.HelmRepositoryKind),
	sourcev1.GroupVersion.WithKind(sourcev1.HelmChartKind),
	sourcev1.GroupVersion.WithKind(sourcev1.BucketKind),
	kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind),
	helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind),
	notificationv1beta3.GroupVersion.WithKind(notificationv1beta3.AlertKind),
	notificationv1beta3.GroupVersion.WithKind(notificationv1beta3.ProviderKind),
	notificationv1.GroupVersion.WithKind(notificationv1.ReceiverKind),
	imagev1.GroupVersion.WithKind(imagev1.ImageUpdateAutomationKind),
	imagev1.GroupVersion.WithKind(imagev1.ImagePolicyKind),
	imagev1.GroupVersion.WithKind(imagev1.ImageRepositoryKind),
}

// NewCommand returns `weir stats`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "stats",
		Args:  cobra.NoArgs,
		Short: "Stats of Flux reconciles",
		Long: `The stats command prints a report of Flux custom resources present on a cluster,
including their reconcile status and the amount of cumulative storage used for each source type`,
		Example: `  # Print the stats report for a namespace
  weir stats --namespace default

  # Print the stats report for the whole cluster
  weir stats -A`,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			cl, err := deps.Client()
			if err != nil {
				return err
			}
			ns := deps.Namespace()
			if all {
				ns = ""
			}
			rows := make([][]string, 0, len(Counted))
			for _, gvk := range Counted {
				s := count(ctx, cl, gvk, ns)
				rows = append(rows, []string{gvk.Kind, strconv.Itoa(s.total - s.suspended), strconv.Itoa(s.failing),
					strconv.Itoa(s.suspended), FormatSize(s.size)})
			}
			return output.WriteTable(streams.Out, []string{"Reconcilers", "Running", "Failing", "Suspended", "Storage"}, rows)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the statistics for objects across all namespaces")
	return cmd
}

type stats struct {
	total, suspended, failing int
	size                      int64
}

// count reads the objects of one kind. A kind the cluster does not serve
// counts nothing, as in the flux CLI.
func count(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns string) stats {
	var s stats
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return s
	}
	s.total = len(list.Items)
	for i := range list.Items {
		u := &list.Items[i]
		if kinds.Suspended(u) {
			s.suspended++
		}
		if r := kinds.Condition(u, meta.ReadyCondition); r != nil && r.Status == metav1.ConditionFalse {
			s.failing++
		}
		if size, ok, _ := unstructured.NestedInt64(u.Object, "status", "artifact", "size"); ok {
			s.size += size
		}
	}
	return s
}

// FormatSize prints a byte count as the flux CLI does: "-" for none,
// "512 B", "1.5 KiB", "3.0 MiB".
func FormatSize(b int64) string {
	if b == 0 {
		return "-"
	}
	if b < 1024 {
		return fmt.Sprintf("%d B", b)
	}
	const units = "KMGTPE"
	v, i := float64(b)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}
