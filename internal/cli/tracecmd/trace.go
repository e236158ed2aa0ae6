package tracecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/output"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// Labels Flux's controllers set on what they apply, naming the owner.
const (
	kustomizeGroup = "kustomize.toolkit.fluxcd.io"
	helmGroup      = "helm.toolkit.fluxcd.io"
)

// OCI annotations a source artifact's metadata may carry, shown as the
// origin of an OCIRepository's content.
var originAnnotations = []struct{ label, key string }{
	{"Origin Revision:", "org.opencontainers.image.revision"},
	{"Origin Source:", "org.opencontainers.image.source"},
}

// NewCommand returns `weir trace`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	var kind, apiVersion string
	cmd := &cobra.Command{
		Use:   "trace <resource> <name> [<name> ...]",
		Short: "Trace in-cluster objects throughout the GitOps delivery pipeline",
		Long: `The trace command shows how one or more objects are managed by Flux,
from which source and revision they come, and what the latest reconciliation status is.

You can also trace multiple objects with different resource kinds using <resource>/<name> multiple times.`,
		Example: `  # Trace a Kubernetes Deployment
  weir trace -n apps deployment my-app

  # Trace a Kubernetes Pod and a config map
  weir trace -n redis pod/redis-master-0 cm/redis

  # API Version and Kind can also be specified explicitly
  weir trace redis --kind=HelmRelease --api-version=helm.toolkit.fluxcd.io/v2 -n redis`,
		RunE: func(c *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			cl, err := deps.Client()
			if err != nil {
				return err
			}
			var objs []*unstructured.Unstructured
			if kind != "" || apiVersion != "" {
				var obj *unstructured.Unstructured
				obj, err = getStatic(ctx, cl, deps.Namespace(), kind, apiVersion, args)
				objs = []*unstructured.Unstructured{obj}
			} else {
				objs, err = getDynamic(deps, args)
			}
			if err != nil {
				return err
			}
			return traceAll(ctx, cl, streams, objs)
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "", "the Kubernetes object kind, e.g. Deployment'")
	cmd.Flags().StringVar(&apiVersion, "api-version", "", "the Kubernetes object API version, e.g. 'apps/v1'")
	return cmd
}

func getStatic(ctx context.Context, c client.Client, ns, kind, apiVersion string, args []string) (*unstructured.Unstructured, error) {
	if len(args) < 1 {
		return nil, errors.New("object name is required")
	}
	if kind == "" {
		return nil, errors.New("object kind is required (--kind)")
	}
	if apiVersion == "" {
		return nil, errors.New("object apiVersion is required (--api-version)")
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("invalid apiVersion: %w", err)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gv.WithKind(kind))
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: args[0]}, obj); err != nil {
		return nil, fmt.Errorf("failed to find object: %w", err)
	}
	return obj, nil
}

// getDynamic reads the objects kubectl-style arguments name ("deploy app",
// "pod/a cm/b"), resolving short names through discovery.
func getDynamic(deps *clideps.Deps, args []string) ([]*unstructured.Unstructured, error) {
	r := resource.NewBuilder(deps.Kube).Unstructured().
		NamespaceParam(deps.Namespace()).DefaultNamespace().
		ResourceTypeOrNameArgs(false, args...).ContinueOnError().Latest().Do()
	if err := r.Err(); err != nil {
		if resource.IsUsageError(err) {
			return nil, errors.New("either `<resource>/<name>` or `<resource> <name>` is required as an argument")
		}
		return nil, err
	}
	infos, err := r.Infos()
	if err != nil {
		return nil, fmt.Errorf("failed to find object: %w", err)
	}
	var objs []*unstructured.Unstructured
	for _, info := range infos {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(info.Object)
		if err != nil {
			return nil, err
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	if len(objs) == 0 {
		return nil, errors.New("failed to find object")
	}
	return objs, nil
}

func traceAll(ctx context.Context, c client.Client, streams genericiooptions.IOStreams, objs []*unstructured.Unstructured) error {
	p := output.Progress{W: streams.ErrOut}
	failed := false
	for i, obj := range objs {
		if err := traceOne(ctx, c, streams.Out, obj); err != nil {
			p.Failuref("failed to trace %s/%s in namespace %s: %v", obj.GetKind(), obj.GetName(), obj.GetNamespace(), err)
			failed = true
		}
		if i < len(objs)-1 {
			fmt.Fprintln(streams.Out, "---")
		}
	}
	if failed {
		return output.Reported
	}
	return nil
}

func traceOne(ctx context.Context, c client.Client, w io.Writer, obj *unstructured.Unstructured) error {
	if obj.GroupVersionKind().GroupKind() == kinds.HelmChart.GVK().GroupKind() {
		return traceHelmChart(ctx, c, w, obj)
	}
	if key, ok := managedBy(ctx, c, obj, kustomizeGroup); ok {
		return traceKustomization(ctx, c, w, key, obj)
	}
	if key, ok := managedBy(ctx, c, obj, helmGroup); ok {
		return traceHelmRelease(ctx, c, w, key, obj)
	}
	return errors.New("object not managed by Flux")
}

// labelled reads the <group>/name and <group>/namespace labels.
func labelled(obj *unstructured.Unstructured, group string) (client.ObjectKey, bool) {
	l := obj.GetLabels()
	key := client.ObjectKey{Name: l[group+"/name"], Namespace: l[group+"/namespace"]}
	return key, key.Name != ""
}

// managedBy finds the Flux object of group that applied obj, from obj's
// labels or, failing those, its owners' (a Pod of a ReplicaSet of a
// Deployment).
func managedBy(ctx context.Context, c client.Client, obj *unstructured.Unstructured, group string) (client.ObjectKey, bool) {
	if key, ok := labelled(obj, group); ok {
		return key, true
	}
	for _, ref := range obj.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return client.ObjectKey{}, false
		}
		owner := &unstructured.Unstructured{}
		owner.SetGroupVersionKind(gv.WithKind(ref.Kind))
		if err := c.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: ref.Name}, owner); err != nil {
			return client.ObjectKey{}, false
		}
		if key, ok := managedBy(ctx, c, owner, group); ok {
			return key, true
		}
	}
	return client.ObjectKey{}, false
}

// report writes "Label:   value" lines, values aligned at width.
type report struct {
	b     strings.Builder
	width int
}

func (r *report) line(label, value string) {
	fmt.Fprintf(&r.b, "%-*s%s\n", r.width, label, value)
}

func (r *report) separator() { r.b.WriteString("---\n") }

func (r *report) object(obj *unstructured.Unstructured) {
	r.b.WriteString("\n")
	r.line("Object:", obj.GetKind()+"/"+obj.GetName())
	if obj.GetNamespace() != "" {
		r.line("Namespace:", obj.GetNamespace())
	}
	r.line("Status:", "Managed by Flux")
}

// status writes the Status and Message lines of a Ready condition; failed
// says whether a False one reads "Last reconciliation failed at".
func (r *report) status(u *unstructured.Unstructured, failed bool) {
	c := kinds.Condition(u, meta.ReadyCondition)
	if c == nil {
		r.line("Status:", "Unknown")
		return
	}
	if failed && c.Status == metav1.ConditionFalse {
		r.line("Status:", "Last reconciliation failed at "+c.LastTransitionTime.String())
	} else {
		r.line("Status:", "Last reconciled at "+c.LastTransitionTime.String())
	}
	r.line("Message:", c.Message)
}

func str(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

func get(ctx context.Context, c client.Client, k kinds.Kind, key client.ObjectKey) (*unstructured.Unstructured, error) {
	u := k.New()
	if err := c.Get(ctx, key, u); err != nil {
		if k.Kind == kinds.Kustomization.Kind {
			return nil, fmt.Errorf("failed to find kustomization: %w", err)
		}
		return nil, fmt.Errorf("failed to find %s: %w", k.Kind, err)
	}
	return u, nil
}

func traceKustomization(ctx context.Context, c client.Client, w io.Writer, key client.ObjectKey, obj *unstructured.Unstructured) error {
	r, err := kustomizationReport(ctx, c, key, obj)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, r.b.String())
	return err
}

// kustomizationReport is the trace of obj applied by the Kustomization at
// key: the object, the Kustomization and its source.
func kustomizationReport(ctx context.Context, c client.Client, key client.ObjectKey, obj *unstructured.Unstructured) (*report, error) {
	ks, err := get(ctx, c, kinds.Kustomization, key)
	if err != nil {
		return nil, err
	}
	var src *unstructured.Unstructured
	srcKind, srcNS, srcName, err := kinds.SourceRef(ks)
	if err == nil {
		if src, err = get(ctx, c, srcKind, client.ObjectKey{Namespace: srcNS, Name: srcName}); err != nil {
			return nil, err
		}
	}
	r := &report{width: 17}
	if src != nil && srcKind.Kind == kinds.ExternalArtifact.Kind {
		r.width = generatorWidth
	}
	r.object(obj)
	r.separator()
	r.line("Kustomization:", ks.GetName())
	r.line("Namespace:", ks.GetNamespace())
	if t := str(ks, "spec", "targetNamespace"); t != "" {
		r.line("Target:", t)
	}
	r.line("Path:", str(ks, "spec", "path"))
	r.line("Revision:", str(ks, "status", "lastAppliedRevision"))
	r.status(ks, false)
	if src == nil {
		return r, nil
	}
	r.separator()
	if srcKind.Kind != kinds.ExternalArtifact.Kind {
		r.source(src, srcKind)
		return r, nil
	}
	r.external(src)
	return r, r.generator(ctx, c, src)
}

// source writes a GitRepository, OCIRepository or Bucket section.
func (r *report) source(src *unstructured.Unstructured, k kinds.Kind) {
	r.line(k.Kind+":", src.GetName())
	r.line("Namespace:", src.GetNamespace())
	switch k.Kind {
	case kinds.Bucket.Kind:
		r.line("Endpoint:", str(src, "spec", "endpoint"))
		r.line("Bucket:", str(src, "spec", "bucketName"))
	default:
		r.line("URL:", str(src, "spec", "url"))
	}
	switch {
	case str(src, "spec", "ref", "tag") != "":
		r.line("Tag:", str(src, "spec", "ref", "tag"))
	case str(src, "spec", "ref", "semver") != "":
		r.line("Tag:", str(src, "spec", "ref", "semver"))
	case k.Kind == kinds.GitRepository.Kind && str(src, "spec", "ref", "branch") != "":
		r.line("Branch:", str(src, "spec", "ref", "branch"))
	case k.Kind == kinds.OCIRepository.Kind && str(src, "spec", "ref", "digest") != "":
		r.line("Digest:", str(src, "spec", "ref", "digest"))
	}
	if rev, ok, _ := unstructured.NestedString(src.Object, "status", "artifact", "revision"); ok {
		r.line("Revision:", rev)
		md, _, _ := unstructured.NestedStringMap(src.Object, "status", "artifact", "metadata")
		for _, a := range originAnnotations {
			if v := md[a.key]; v != "" && k.Kind == kinds.OCIRepository.Kind {
				r.line(a.label, v)
			}
		}
	}
	r.status(src, true)
}

func traceHelmRelease(ctx context.Context, c client.Client, w io.Writer, key client.ObjectKey, obj *unstructured.Unstructured) error {
	hr, err := get(ctx, c, kinds.HelmRelease, key)
	if err != nil {
		return err
	}
	var chart, repo *unstructured.Unstructured
	var repoKind kinds.Kind
	if ref := str(hr, "status", "helmChart"); ref != "" {
		ns, name, _ := strings.Cut(ref, "/")
		if chart, err = get(ctx, c, kinds.HelmChart, client.ObjectKey{Namespace: ns, Name: name}); err != nil {
			return err
		}
	}
	if m, ok, _ := unstructured.NestedStringMap(hr.Object, "spec", "chart", "spec", "sourceRef"); ok {
		if k, known := kinds.ByKind(m["kind"]); known && (k.Kind == kinds.GitRepository.Kind || k.Kind == kinds.HelmRepository.Kind) {
			ns := m["namespace"]
			if ns == "" {
				ns = hr.GetNamespace()
			}
			if repo, err = get(ctx, c, k, client.ObjectKey{Namespace: ns, Name: m["name"]}); err != nil {
				return err
			}
			repoKind = k
		}
	}
	ea, err := chartRefArtifact(ctx, c, hr)
	if err != nil {
		return err
	}
	r := &report{width: 16}
	if ea != nil {
		r.width = generatorWidth
	}
	r.object(obj)
	r.helm(hr, chart, repo, repoKind)
	if ea != nil {
		r.separator()
		r.external(ea)
		if err := r.generator(ctx, c, ea); err != nil {
			return err
		}
	}
	_, err = io.WriteString(w, r.b.String())
	return err
}

// helm writes the HelmRelease, HelmChart and chart source sections.
func (r *report) helm(hr, chart, repo *unstructured.Unstructured, repoKind kinds.Kind) {
	r.separator()
	r.line("HelmRelease:", hr.GetName())
	r.line("Namespace:", hr.GetNamespace())
	if t := str(hr, "spec", "targetNamespace"); t != "" {
		r.line("Target:", t)
	}
	r.line("Revision:", kinds.HelmRelease.Revision(hr))
	r.status(hr, false)
	if chart != nil {
		r.separator()
		r.chart(chart)
	}
	if repo != nil {
		r.separator()
		r.chartSource(repo, repoKind)
	}
}

// chart writes a HelmChart section.
func (r *report) chart(chart *unstructured.Unstructured) {
	r.line("HelmChart:", chart.GetName())
	r.line("Namespace:", chart.GetNamespace())
	r.line("Chart:", str(chart, "spec", "chart"))
	r.line("Version:", str(chart, "spec", "version"))
	if rev, ok, _ := unstructured.NestedString(chart.Object, "status", "artifact", "revision"); ok {
		r.line("Revision:", rev)
	}
	r.status(chart, false)
}

// chartSource writes the section of the source a chart comes from: a
// HelmRepository, or a GitRepository or Bucket as a Kustomization's source
// is written.
func (r *report) chartSource(repo *unstructured.Unstructured, repoKind kinds.Kind) {
	if repoKind.Kind != kinds.HelmRepository.Kind {
		r.width = 15 // as the flux CLI aligns a chart's Git source
		r.source(repo, repoKind)
		return
	}
	r.line("HelmRepository:", repo.GetName())
	r.line("Namespace:", repo.GetNamespace())
	r.line("URL:", str(repo, "spec", "url"))
	if rev, ok, _ := unstructured.NestedString(repo.Object, "status", "artifact", "revision"); ok {
		r.line("Revision:", rev)
	}
	r.status(repo, false)
}
