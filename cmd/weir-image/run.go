package main

import (
	"context"
	"fmt"

	"github.com/weir-gitops/weir/internal/image"
)

func run(opts image.Options, push, output, tag string) error {
	img, err := image.Build(opts)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	if output != "" {
		if err := image.WriteTarball(img, tag, output); err != nil {
			return err
		}
		fmt.Printf("✔ wrote %s (%s)\n", output, digest)
	}
	if push != "" {
		if _, err := image.Push(context.Background(), img, push, nil); err != nil {
			return err
		}
		fmt.Printf("✔ pushed %s@%s\n", push, digest)
	}
	return nil
}
