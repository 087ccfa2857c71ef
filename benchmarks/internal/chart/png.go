// SPDX-License-Identifier: Apache-2.0

package chart

import (
	"image"
	"image/color"
	"image/png"
	"os"
)

// WritePNG renders c at w × h pixels into a PNG file at path.
func WritePNG(path string, c Chart, w, h int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, c.Render(w, h)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CountPixels returns how many pixels of img have exactly c's colour
// (alpha ignored): the tools' tests use it to tell that a series was drawn.
func CountPixels(img image.Image, c color.Color) int {
	r0, g0, b0, _ := c.RGBA()
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			if r == r0 && g == g0 && bb == b0 {
				n++
			}
		}
	}
	return n
}
