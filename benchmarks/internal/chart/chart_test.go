// SPDX-License-Identifier: Apache-2.0

package chart

import (
	"image"
	"image/color"
	"strings"
	"testing"
)

// A chart whose values are all equal or has no data still renders.
func TestRenderDegenerate(t *testing.T) {
	for _, c := range []Chart{
		{Title: "empty"},
		{Title: "flat", Series: []Series{{Label: "a", Points: []Point{{X: 1, Y: 5}, {X: 1, Y: 5}}}}},
	} {
		img := c.Render(400, 200)
		if img.Bounds().Dx() != 400 || img.Bounds().Dy() != 200 {
			t.Fatalf("%s: %v", c.Title, img.Bounds())
		}
		if CountPixels(img, Black) == 0 {
			t.Fatalf("%s: nothing drawn", c.Title)
		}
	}
}

// columnsWith returns the x positions of the columns holding at least n
// pixels of colour c.
func columnsWith(img *image.RGBA, c color.Color, n int) []int {
	var cols []int
	b := img.Bounds()
	r0, g0, b0, _ := c.RGBA()
	for x := b.Min.X; x < b.Max.X; x++ {
		k := 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			r, g, bb, _ := img.At(x, y).RGBA()
			if r == r0 && g == g0 && bb == b0 {
				k++
			}
		}
		if k >= n {
			cols = append(cols, x)
		}
	}
	return cols
}

// A range is drawn as a vertical bar as tall as the range on the axis, and
// Dodge moves the series apart.
func TestRenderRangesAndDodge(t *testing.T) {
	// y from 0 to 11 (linear) over 300 pixels: a range of 2 to 10 is about
	// 220 pixels tall; the point alone is 5.
	c := Chart{Title: "ranges", Series: []Series{
		{Label: "a", Points: []Point{{X: 1, Y: 5, Lo: 2, Hi: 10}, {X: 10, Y: 5}}},
		{Label: "b", Points: []Point{{X: 1, Y: 5}, {X: 10, Y: 5}}},
	}}
	img := c.Render(800, 400)
	tall := columnsWith(img, Palette[0], 150)
	if len(tall) != 1 {
		t.Fatalf("columns of series a with a tall bar: %v, want exactly one", tall)
	}
	plain := c
	plain.Series = []Series{c.Series[1]}
	noRange := plain.Render(800, 400)
	if got := columnsWith(noRange, Palette[0], 150); len(got) != 0 {
		t.Fatalf("a series without ranges has tall columns: %v", got)
	}

	c.Dodge = 20
	dodged := c.Render(800, 400)
	moved := columnsWith(dodged, Palette[0], 150)
	if len(moved) != 1 || moved[0] != tall[0]-10 {
		t.Fatalf("with Dodge 20 the bar of the first of two series is at %v, want %d", moved, tall[0]-10)
	}
}

// Ranges widen the y axis: a chart whose range reaches 100 has a tick at
// 100 or above, although no point is above 10.
func TestRangesWidenTheAxis(t *testing.T) {
	ya := yAxis([]float64{5, 10, 1, 100}, 300, 0)
	if last := ya.ticks[len(ya.ticks)-1]; last < 100 {
		t.Fatalf("last tick %v, want at least 100", last)
	}
}

func TestXTick(t *testing.T) {
	xa := xAxis([]float64{16, 4, 4}, 0, 100, func(x float64) string { return NumLabel(x) + " clients" })
	if strings.Join(xa.tickLabels, ",") != "4 clients,16 clients" {
		t.Fatalf("tick labels %q", xa.tickLabels)
	}
}

func TestLabels(t *testing.T) {
	for in, want := range map[float64]string{4096: "4K", 1 << 20: "1M", 10_000: "10000", 100: "100", 2.5: "2.5"} {
		if got := SizeLabel(in); got != want {
			t.Errorf("SizeLabel(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{1000: "1000", 20_000: "20K", 2_500_000: "2.5M"} {
		if got := NumLabel(in); got != want {
			t.Errorf("NumLabel(%v) = %q, want %q", in, got, want)
		}
	}
	for _, r := range "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ .,:;-+=/()%_*<>?" {
		rows := strings.Split(glyphs[r], "|")
		if len(rows) != glyphH {
			t.Fatalf("glyph %q has %d rows", r, len(rows))
		}
		for _, row := range rows {
			if len(row) != glyphW {
				t.Fatalf("glyph %q row %q", r, row)
			}
		}
	}
}
