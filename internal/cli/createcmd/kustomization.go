package createcmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

type kustomizationOptions struct {
	source                  sourceRef
	path                    safeRelativePath
	prune, wait             bool
	dependsOn, healthChecks []string
	healthTimeout           time.Duration
	serviceAccount          string
	decryptionProvider      *enum
	decryptionSecret        string
	targetNamespace         string
	kubeConfigSecretRef     string
	retryInterval           time.Duration
	validation              string
}

func newKustomizationCommand(e *env) *cobra.Command {
	o := &kustomizationOptions{path: "./", decryptionProvider: newEnum("", "decryption provider", "sops")}
	cmd := &cobra.Command{
		Use:     "kustomization [name]",
		Aliases: []string{"ks"},
		Short:   "Create or update a Kustomization resource",
		Long:    "The create command generates a Kustomization resource for a given source.",
		Example: `  # Create a Kustomization resource from a source at a given path
  weir create kustomization kyverno \
    --source=GitRepository/kyverno \
    --path="./config/release" \
    --prune=true \
    --interval=60m \
    --wait=true \
    --health-check-timeout=3m

  # Create a Kustomization resource that depends on the previous one
  weir create kustomization kyverno-policies \
    --depends-on=kyverno \
    --source=GitRepository/kyverno-policies \
    --path="./policies/flux" \
    --prune=true \
    --interval=5m

  # Create a Kustomization using a source from a different namespace
  weir create kustomization podinfo \
    --namespace=default \
    --source=GitRepository/podinfo.flux-system \
    --path="./kustomize" \
    --prune=true \
    --interval=5m`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return e.createKustomization(c, args[0], o) },
	}
	f := cmd.Flags()
	f.Var(&o.source, "source", "source that contains the Kubernetes manifests in the format '[<kind>/]<name>.<namespace>', "+
		"where kind must be one of: (OCIRepository, GitRepository, Bucket), if kind is not specified it defaults to GitRepository")
	f.Var(&o.path, "path", "path to the directory containing a kustomization.yaml file")
	f.BoolVar(&o.prune, "prune", false, "enable garbage collection")
	f.BoolVar(&o.wait, "wait", false, "enable health checking of all the applied resources")
	f.StringSliceVar(&o.healthChecks, "health-check", nil, "workload to be included in the health assessment, in the format '<kind>/<name>.<namespace>'")
	f.DurationVar(&o.healthTimeout, "health-check-timeout", 2*time.Minute, "timeout of health checking operations")
	f.StringVar(&o.validation, "validation", "", "validate the manifests before applying them on the cluster, can be 'client' or 'server'")
	_ = f.MarkDeprecated("validation", "this arg is no longer used, all resources are validated using server-side apply dry-run")
	f.StringSliceVar(&o.dependsOn, "depends-on", nil, "Kustomization that must be ready before this Kustomization can be applied, "+
		"supported formats '<name>', '<namespace>/<name>' and '<namespace>/<name>@<readyExpr>', also accepts comma-separated values")
	f.StringVar(&o.serviceAccount, "service-account", "", "the name of the service account to impersonate when reconciling this Kustomization")
	f.Var(o.decryptionProvider, "decryption-provider", "decryption provider, available options are: (sops)")
	f.StringVar(&o.decryptionSecret, "decryption-secret", "", "set the Kubernetes secret name that contains the OpenPGP private keys used for sops decryption")
	f.StringVar(&o.targetNamespace, "target-namespace", "", "overrides the namespace of all Kustomization objects reconciled by this Kustomization")
	f.StringVar(&o.kubeConfigSecretRef, "kubeconfig-secret-ref", "", "the name of the Kubernetes Secret that contains a key with the kubeconfig file for connecting to a remote cluster")
	f.DurationVar(&o.retryInterval, "retry-interval", 0, "the interval at which to retry a previously failed reconciliation")
	return cmd
}

// dependsOn parses --depends-on: name, namespace/name, each optionally
// followed by @readyExpr (a CEL expression), as the flux CLI does.
func dependsOn(deps []string) []meta.DependencyReference {
	var refs []meta.DependencyReference
	for _, d := range deps {
		var ref meta.DependencyReference
		if i := strings.Index(d, "@"); i >= 0 {
			ref.ReadyExpr, d = d[i+1:], d[:i]
		}
		if ns, name, ok := strings.Cut(d, "/"); ok {
			ref.Namespace, ref.Name = ns, name
		} else {
			ref.Name = d
		}
		refs = append(refs, ref)
	}
	return refs
}

// healthCheckAPIVersions are the kinds --health-check accepts, with the
// apiVersion written for each.
var healthCheckAPIVersions = map[string]string{
	"Deployment": "apps/v1", "DaemonSet": "apps/v1", "StatefulSet": "apps/v1",
	helmv2.HelmReleaseKind: helmv2.GroupVersion.String(),
}

func healthChecks(checks []string) ([]meta.NamespacedObjectKindReference, error) {
	var out []meta.NamespacedObjectKindReference
	for _, w := range checks {
		kind, rest, ok := strings.Cut(w, "/")
		if !ok || strings.Contains(rest, "/") {
			return nil, fmt.Errorf("invalid health check '%s' must be in the format 'kind/name.namespace'", w)
		}
		apiVersion, known := healthCheckAPIVersions[kind]
		if !known {
			return nil, fmt.Errorf("invalid health check kind '%s' can be HelmRelease, Deployment, DaemonSet or StatefulSet", kind)
		}
		name, ns, ok := strings.Cut(rest, ".")
		if !ok || strings.Contains(ns, ".") {
			return nil, fmt.Errorf("invalid health check '%s' must be in the format 'kind/name.namespace'", w)
		}
		out = append(out, meta.NamespacedObjectKindReference{APIVersion: apiVersion, Kind: kind, Name: name, Namespace: ns})
	}
	return out, nil
}

func (e *env) createKustomization(c *cobra.Command, name string, o *kustomizationOptions) error {
	if o.path == "" {
		return fmt.Errorf("path is required")
	}
	if !strings.HasPrefix(string(o.path), "./") {
		return fmt.Errorf("path must begin with ./")
	}
	if o.source.name == "" {
		return fmt.Errorf("source is required")
	}
	if !e.o.export {
		e.p.Generatef("generating Kustomization")
	}
	labels, err := e.labels()
	if err != nil {
		return err
	}
	ks := &kustomizev1.Kustomization{
		TypeMeta:   metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.deps.Namespace(), Labels: labels},
		Spec: kustomizev1.KustomizationSpec{
			DependsOn: dependsOn(o.dependsOn),
			Interval:  metav1.Duration{Duration: e.o.interval},
			Path:      string(o.path),
			Prune:     o.prune,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{
				Kind: o.source.kind, Name: o.source.name, Namespace: o.source.namespace,
			},
			TargetNamespace:    o.targetNamespace,
			ServiceAccountName: o.serviceAccount,
		},
	}
	if o.kubeConfigSecretRef != "" {
		ks.Spec.KubeConfig = &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: o.kubeConfigSecretRef}}
	}
	// As the flux CLI: health checks only without --wait (which checks
	// everything), and either sets the timeout.
	if len(o.healthChecks) > 0 && !o.wait {
		checks, err := healthChecks(o.healthChecks)
		if err != nil {
			return err
		}
		ks.Spec.HealthChecks = checks
		ks.Spec.Timeout = &metav1.Duration{Duration: o.healthTimeout}
	}
	if o.wait {
		ks.Spec.Wait = true
		ks.Spec.Timeout = &metav1.Duration{Duration: o.healthTimeout}
	}
	if o.decryptionProvider.value != "" {
		ks.Spec.Decryption = &kustomizev1.Decryption{Provider: o.decryptionProvider.value}
		if o.decryptionSecret != "" {
			ks.Spec.Decryption.SecretRef = &meta.LocalObjectReference{Name: o.decryptionSecret}
		}
	}
	if o.retryInterval > 0 {
		ks.Spec.RetryInterval = &metav1.Duration{Duration: o.retryInterval}
	}
	if e.o.export {
		return e.export(ks)
	}
	ctx, cancel := e.context(c)
	defer cancel()
	cl, err := e.deps.Client()
	if err != nil {
		return err
	}
	ready, err := e.applyAndWait(ctx, cl, kinds.Kustomization, "Kustomization", ks, fmt.Sprintf("Kustomization %s is ready", name))
	if err != nil {
		return err
	}
	rev, _, _ := unstructured.NestedString(ready.Object, "status", "lastAppliedRevision")
	e.p.Successf("applied revision %s", rev)
	return nil
}
