package debugcmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	helmv2 "github.com/weir-gitops/weir/api/helm/v2"
	kustomizev1 "github.com/weir-gitops/weir/api/kustomize/v1"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/cli/kindcmd"
	"github.com/weir-gitops/weir/internal/helm/release"
	"github.com/weir-gitops/weir/internal/kustomize/render"
	"github.com/weir-gitops/weir/internal/view/kinds"
)

// The comment lines the flux CLI prints above a status or a history, so
// that a person reading it knows where the fields are explained.
const (
	ksStatusDoc  = "# Status documentation: https://fluxcd.io/flux/components/kustomize/kustomizations/#kustomization-status"
	ksHistoryDoc = "# History documentation: https://fluxcd.io/flux/components/kustomize/kustomizations/#history"
	hrStatusDoc  = "# Status documentation: https://fluxcd.io/flux/components/helm/helmreleases/#helmrelease-status"
	hrHistoryDoc = "# History documentation: https://fluxcd.io/flux/components/helm/helmreleases/#history"
)

// NewCommand returns `weir debug`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "debug",
		Short: "Debug a Flux resource",
		Long:  "The debug sub-commands show the computed state of Flux resources for troubleshooting purposes.",
	}
	cmd.AddCommand(kustomizationCommand(streams, deps), helmReleaseCommand(streams, deps))
	return cmd
}

// view is what one of the --show-* flags prints.
type view struct {
	flag string
	show bool
}

// exactlyOne checks that one and only one view was asked for, as the flux
// CLI requires, and returns its flag.
func exactlyOne(views ...*view) (string, error) {
	var chosen []string
	names := make([]string, 0, len(views))
	for _, v := range views {
		names = append(names, "--"+v.flag)
		if v.show {
			chosen = append(chosen, v.flag)
		}
	}
	if len(chosen) != 1 {
		last := len(names) - 1
		return "", fmt.Errorf("either %s or %s must be set", strings.Join(names[:last], ", "), names[last])
	}
	return chosen[0], nil
}

func kustomizationCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	status := &view{flag: "show-status"}
	vars := &view{flag: "show-vars"}
	history := &view{flag: "show-history"}
	cmd := &cobra.Command{
		Use:     "kustomization [name]",
		Aliases: []string{"ks"},
		Short:   "Debug a Flux Kustomization resource",
		Long: `The debug kustomization command can be used to troubleshoot failing Flux Kustomization reconciliations.
WARNING: This command will print sensitive information if Kubernetes Secrets are referenced in the Kustomization .spec.postBuild.substituteFrom field.`,
		Example: "  # Print the status of a Flux Kustomization\n  weir debug ks podinfo --show-status\n\n" +
			"  # Export the final variables used for post-build substitutions composed from referred ConfigMaps and Secrets\n" +
			"  weir debug ks podinfo --show-vars > vars.env\n\n" +
			"  # Print the reconciliation history of a Flux Kustomization\n  weir debug ks podinfo --show-history",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: kindcmd.CompleteNames(deps, kinds.Kustomization),
		RunE: func(c *cobra.Command, args []string) error {
			which, err := exactlyOne(status, vars, history)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			ks := &kustomizev1.Kustomization{}
			cl, err := get(ctx, deps, "Kustomization", args[0], ks)
			if err != nil {
				return err
			}
			switch which {
			case status.flag:
				return writeYAML(streams.Out, ksStatusDoc, ks.Status)
			case history.flag:
				return writeYAML(streams.Out, ksHistoryDoc, emptyList(ks.Status.History))
			default:
				return writeVars(ctx, streams.Out, cl, ks)
			}
		},
	}
	cmd.Flags().BoolVar(&status.show, status.flag, false, "print the status of the Flux Kustomization")
	cmd.Flags().BoolVar(&vars.show, vars.flag, false, "print the final vars of the Flux Kustomization in dot env format")
	cmd.Flags().BoolVar(&history.show, history.flag, false, "print the reconciliation history of the Flux Kustomization")
	return cmd
}

// get reads the object of kind named name in the namespace -n names into
// obj, and returns the client, for what the command reads next.
func get(ctx context.Context, deps *clideps.Deps, kind, name string, obj client.Object) (client.Client, error) {
	cl, err := deps.Client()
	if err != nil {
		return nil, err
	}
	if err := cl.Get(ctx, types.NamespacedName{Namespace: deps.Namespace(), Name: name}, obj); err != nil {
		return nil, fmt.Errorf("getting %s %s/%s: %w", kind, deps.Namespace(), name, err)
	}
	return cl, nil
}

// writeVars prints the variables post-build substitution would use, as
// KEY=VALUE lines sorted by key. The newlines of spec.postBuild.substitute
// values are dropped, as the substitution drops them.
func writeVars(ctx context.Context, w io.Writer, cl client.Reader, ks *kustomizev1.Kustomization) error {
	if ks.Spec.PostBuild == nil {
		return fmt.Errorf("no post build substitutions found")
	}
	vars, err := render.Variables(ctx, cl, ks)
	if err != nil {
		return err
	}
	for k, v := range ks.Spec.PostBuild.Substitute {
		vars[k] = strings.ReplaceAll(v, "\n", "")
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if _, err := fmt.Fprintf(w, "%s=%s\n", k, vars[k]); err != nil {
			return err
		}
	}
	return nil
}

func helmReleaseCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	status := &view{flag: "show-status"}
	values := &view{flag: "show-values"}
	history := &view{flag: "show-history"}
	cmd := &cobra.Command{
		Use:     "helmrelease [name]",
		Aliases: []string{"hr"},
		Short:   "Debug a HelmRelease resource",
		Long: `The debug helmrelease command can be used to troubleshoot failing Helm release reconciliations.
WARNING: This command will print sensitive information if Kubernetes Secrets are referenced in the HelmRelease .spec.valuesFrom field.`,
		Example: "  # Print the status of a Helm release\n  weir debug hr podinfo --show-status\n\n" +
			"  # Export the final values of a Helm release composed from referred ConfigMaps and Secrets\n" +
			"  weir debug hr podinfo --show-values > values.yaml\n\n" +
			"  # Print the reconciliation history of a Helm release\n  weir debug hr podinfo --show-history",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: kindcmd.CompleteNames(deps, kinds.HelmRelease),
		RunE: func(c *cobra.Command, args []string) error {
			which, err := exactlyOne(status, values, history)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(c.Context(), deps.Timeout)
			defer cancel()
			hr := &helmv2.HelmRelease{}
			cl, err := get(ctx, deps, "HelmRelease", args[0], hr)
			if err != nil {
				return err
			}
			switch which {
			case status.flag:
				return writeYAML(streams.Out, hrStatusDoc, hr.Status)
			case history.flag:
				return writeYAML(streams.Out, hrHistoryDoc, emptyList(hr.Status.History))
			default:
				merged, err := release.Values(ctx, cl, hr)
				if err != nil {
					return err
				}
				return writeYAML(streams.Out, "", merged)
			}
		},
	}
	cmd.Flags().BoolVar(&status.show, status.flag, false, "print the status of the Helm release")
	cmd.Flags().BoolVar(&values.show, values.flag, false, "print the final values of the Helm release")
	cmd.Flags().BoolVar(&history.show, history.flag, false, "print the reconciliation history of the Helm release")
	return cmd
}

// emptyList makes a nil history print as [] rather than null.
func emptyList[S ~[]E, E any](s S) S {
	if s == nil {
		return S{}
	}
	return s
}

// writeYAML prints v as YAML, below the comment line doc when there is one.
func writeYAML(w io.Writer, doc string, v any) error {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding YAML: %w", err)
	}
	if doc != "" {
		data = append([]byte(doc+"\n"), data...)
	}
	_, err = w.Write(data)
	return err
}
