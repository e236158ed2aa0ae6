package main

import (
	"context"
	"fmt"

	"github.com/weir-gitops/weir/internal/install/containerimage"
)

func run(opts containerimage.Options, push, output, tag string) error {
	img, err := containerimage.Build(opts)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if output != "" {
		if err := containerimage.WriteTarball(img, tag, output); err != nil {
			return err
		}
		fmt.Printf("✔ wrote %s (%s)\n", output, digest)
	}
	if push != "" {
		if _, err := containerimage.Push(context.Background(), img, push, nil); err != nil {
			return err
		}
		fmt.Printf("✔ pushed %s@%s\n", push, digest)
	}
	return nil
}
