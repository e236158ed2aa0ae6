// Package versioncmd implements `weir version`: the client's version and,
// as `flux version` does, the version of each component installed in the
// namespace (the tag of every container of the Deployments labelled
// app.kubernetes.io/part-of=flux), printed as YAML or JSON.
package versioncmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/weir-gitops/weir/api/meta"
	"github.com/weir-gitops/weir/internal/cli/clideps"
	"github.com/weir-gitops/weir/internal/version"
)

// clientInfoKey names the client's line, as flux's is "flux".
const clientInfoKey = "weir"

// NewCommand returns `weir version`.
func NewCommand(streams genericiooptions.IOStreams, deps *clideps.Deps) *cobra.Command {
	var clientOnly bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and server-side components version information",
		Long:  "The version command prints weir's version and that of each component installed in the namespace.",
		Example: `  # Print client and server-side version
  weir version

  # Print only client version
  weir version --client

  # Print information in json format
  weir version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "yaml" && output != "json" {
				return fmt.Errorf("--output must be json or yaml")
			}
			info := map[string]string{clientInfoKey: version.Version}
			if !clientOnly {
				c, err := deps.Client()
				if err != nil {
					return err
				}
				ctx, cancel := context.WithTimeout(cmd.Context(), deps.Timeout)
				defer cancel()
				if err := serverInfo(ctx, c, deps.Namespace(), info); err != nil {
					return err
				}
			}
			return printInfo(streams, output, info)
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print only client version")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "the format in which the information should be printed. can be 'json' or 'yaml'")
	return cmd
}

// serverInfo adds, for every container of the namespace's Flux
// Deployments, its image's name and tag, and the distribution the
// namespace's labels name.
func serverInfo(ctx context.Context, c client.Reader, namespace string, info map[string]string) error {
	var ns corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err == nil {
		if part, v := ns.Labels[meta.PartOfLabel], ns.Labels[meta.VersionLabel]; part != "" && v != "" {
			info["distribution"] = part + "-" + v
		}
	}
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{meta.PartOfLabel: meta.PartOfValue}); err != nil {
		return fmt.Errorf("listing the Deployments of %s: %w", namespace, err)
	}
	if len(list.Items) == 0 {
		return fmt.Errorf("no deployments found in %s namespace", namespace)
	}
	for _, d := range list.Items {
		for _, ctr := range d.Spec.Template.Spec.Containers {
			name, tag := splitImage(ctr.Image)
			info[name] = tag
		}
	}
	return nil
}

// splitImage returns the last path element of an image reference and its
// tag (the digest when it has no tag, "latest" when it has neither).
func splitImage(image string) (name, tag string) {
	ref, digest, _ := strings.Cut(image, "@")
	name = ref[strings.LastIndex(ref, "/")+1:]
	if i := strings.LastIndex(name, ":"); i >= 0 {
		return name[:i], name[i+1:]
	}
	if digest != "" {
		return name, digest
	}
	return name, "latest"
}

func printInfo(streams genericiooptions.IOStreams, output string, info map[string]string) error {
	var data []byte
	var err error
	if output == "json" {
		data, err = json.MarshalIndent(info, "", "  ")
		data = append(data, '\n')
	} else {
		data, err = yaml.Marshal(info)
	}
	if err != nil {
		return err
	}
	_, err = streams.Out.Write(data)
	return err
}
