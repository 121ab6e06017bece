#!/usr/bin/env python3
"""Writes the `map_arguments` conformance cases: one file per argument check of the HeightMap and
HeightProfile operations, with the code the reference (geogen-reference.md §4.7, §4.8) and the spec's
decisions give. The table below is the source; the .ggs files are generated from it so that every
case has the same shape (a profile `p` and a map `m` to call on, the failing call on line 6).

    python3 tests/conformance/map_arguments/generate.py

These cases are independent of the operations' declarations in the code: removing a check from a
declaration makes its case here fail.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))

# (file stem, code or "ok", call on line 6, description)
CASES = [
    # HeightMap generators
    ("flat_height_above_one", "GGE2303", "HeightMap.Flat(2);", "Flat: a height outside [-1, 1]"),
    ("flat_too_many_arguments", "GGE2103", "HeightMap.Flat(0, 1);", "Flat takes at most one argument"),
    ("flat_string", "GGE2101", 'HeightMap.Flat("high");', "Flat: a String is not a height"),
    ("gradient_missing_height", "GGE2103", "HeightMap.Gradient([0, 0], [1, 1], 0);", "Gradient needs four arguments"),
    ("gradient_height_below_minus_one", "GGE2303", "HeightMap.Gradient([0, 0], [1, 1], -2, 0);", "Gradient: fromHeight outside [-1, 1]"),
    ("gradient_number_is_not_a_point", "GGE2101", "HeightMap.Gradient(1, [1, 1], 0, 1);", "Gradient: a Number is not a Point"),
    ("radial_gradient_negative_radius", "GGE2309", "HeightMap.RadialGradient([0, 0], -1, 1, 0);", "RadialGradient: a negative radius"),
    ("radial_gradient_rim_height", "GGE2303", "HeightMap.RadialGradient([0, 0], 10, 1, 1.5);", "RadialGradient: rimHeight outside [-1, 1]"),
    ("radial_gradient_relative_point_on_infinite_map", "GGE2704", "HeightMap.RadialGradient(@[0.5, 0.5], 10, 1, 0);", "a relative point needs a finite map"),
    ("noise_zero_wavelength", "GGE2710", "HeightMap.Noise({0: 0.5});", "Noise: a wavelength below 1"),
    ("noise_zero_amplitude", "GGE2711", "HeightMap.Noise({8: 0});", "Noise: an amplitude of 0"),
    ("noise_amplitude_above_one", "GGE2303", "HeightMap.Noise({8: 2});", "Noise: an amplitude above 1"),
    ("noise_string_wavelength", "GGE2708", 'HeightMap.Noise({"a": 0.5});', "Noise: a wavelength that is not a Number"),
    ("noise_string_amplitude", "GGE2709", 'HeightMap.Noise({8: "a"});', "Noise: an amplitude that is not a Number"),
    ("noise_layers_not_an_array", "GGE2101", "HeightMap.Noise(5);", "Noise: the layers must be an Array"),
    ("ridged_noise_negative_amplitude", "GGE2711", "HeightMap.RidgedNoise({8: -1});", "RidgedNoise: a negative amplitude"),
    ("cell_noise_zero_cell_size", "GGE2309", "HeightMap.CellNoise(0);", "CellNoise: a cell size of 0"),
    ("cell_noise_negative_cell_size", "GGE2309", "HeightMap.CellNoise(-5, 1);", "CellNoise: a negative cell size"),
    ("cell_noise_without_arguments", "GGE2103", "HeightMap.CellNoise();", "CellNoise needs a cell size"),
    ("cell_noise_one_or_two_arguments", "ok", "HeightMap.CellNoise(10); HeightMap.CellNoise(10, 3);", "CellNoise accepts one argument (as the original) or two (as documented)"),
    ("clone_of_a_number", "GGE2101", "HeightMap.Clone(5);", "Clone: a Number is not a map"),
    ("clone_without_arguments", "GGE2103", "HeightMap.Clone();", "Clone needs a map"),
    ("convexity_map_negative_radius", "GGE2309", "HeightMap.ConvexityMap(m, -1);", "ConvexityMap: a negative radius"),
    ("distance_map_negative_distance", "GGE2309", "HeightMap.DistanceMap(m, -1);", "DistanceMap: a negative distance"),
    ("distance_map_of_a_number", "GGE2101", "HeightMap.DistanceMap(5, 10);", "DistanceMap: a Number is not a map"),
    ("pattern_missing_corner", "GGE2103", "HeightMap.Pattern(m, [0, 0]);", "Pattern needs two corners"),
    ("projection_of_a_map", "GGE2101", "HeightMap.Projection(m, Direction.Horizontal);", "Projection needs a profile, not a map"),
    ("projection_number_direction", "GGE2101", "HeightMap.Projection(p, 0);", "Projection: a Number is not a Direction"),
    # HeightMap methods
    ("abs_with_an_argument", "GGE2103", "m.Abs(1);", "Abs takes no argument"),
    ("add_string", "GGE2101", 'm.Add("a");', "Add: a String is neither a Number nor a map"),
    ("add_height_above_one", "GGE2303", "m.Add(2);", "Add: a Number addend is a height"),
    ("add_number_mask", "GGE2101", "m.Add(0.5, 3);", "Add: the mask must be a map"),
    ("blur_negative_radius", "GGE2309", "m.Blur(-1);", "Blur: a negative radius"),
    ("blur_without_radius", "GGE2103", "m.Blur();", "Blur needs a radius (the original crashed here)"),
    ("clamp_heights_reversed", "GGE2705", "m.ClampHeights(0.5, -0.5);", "ClampHeights: min above max"),
    ("clamp_heights_below_minus_one", "GGE2303", "m.ClampHeights(-2, 0);", "ClampHeights: a height outside [-1, 1]"),
    ("combine_without_mask", "GGE2103", "m.Combine(m);", "Combine needs a mask"),
    ("crop_replace_height", "GGE2303", "m.Crop([0, 0], [5, 5], 2);", "Crop: the replacement is a height"),
    ("crop_heights_reversed", "GGE2705", "m.CropHeights(0.5, 0.2);", "CropHeights: min above max"),
    ("crop_heights_replace_height", "GGE2303", "m.CropHeights(0, 1, 1.5);", "CropHeights: the replacement is a height"),
    ("distort_negative_wavelength", "GGE2309", "m.Distort(-1, 10);", "Distort: a negative perturbation size"),
    ("distort_negative_distance", "GGE2309", "m.Distort(10, -1);", "Distort: a negative distance"),
    ("draw_line_height", "GGE2303", "m.DrawLine([0, 0], [5, 5], 2);", "DrawLine: the height must be in [-1, 1]"),
    ("fill_height_below_minus_one", "GGE2303", "m.Fill(-1.5);", "Fill: a height outside [-1, 1]"),
    ("fill_rectangle_height", "GGE2303", "m.FillRectangle([0, 0], [5, 5], 2);", "FillRectangle: a height outside [-1, 1]"),
    ("flip_number_direction", "GGE2101", "m.Flip(0);", "Flip: a Number is not a Direction"),
    ("glaciate_strength_above_one", "GGE2715", "m.Glaciate(1.5);", "Glaciate: a strength outside [0, 1]"),
    ("glaciate_negative_strength", "GGE2715", "m.Glaciate(-0.1);", "Glaciate: a strength outside [0, 1]"),
    ("glaciate_number_include_negative", "GGE2101", "m.Glaciate(0.2, 1);", "Glaciate: includeNegative is a Boolean"),
    ("glaciate_include_negative_false", "ok", "m.Glaciate(0.2, false); m.Glaciate();", "a Boolean argument can be false; both arguments are optional"),
    ("intersect_number", "GGE2101", "m.Intersect(0.5);", "Intersect needs a map"),
    ("move_number", "GGE2101", "m.Move(5);", "Move needs a Point"),
    ("multiply_string", "GGE2101", 'm.Multiply("a");', "Multiply: a String is neither a Number nor a map"),
    ("rescale_below_a_tenth", "GGE2714", "m.Rescale(0.05);", "Rescale: a scale below 0.1"),
    ("rescale_vertical_above_ten", "GGE2714", "m.Rescale(1, 11);", "Rescale: a scale above 10"),
    ("rotate_string", "GGE2101", 'm.Rotate("a");', "Rotate: the angle is a Number"),
    ("shear_without_direction", "GGE2103", "m.Shear(1);", "Shear needs a direction"),
    ("shear_number_direction", "GGE2101", "m.Shear(1, 1);", "Shear: a Number is not a Direction"),
    ("shift_map_instead_of_profile", "GGE2101", "m.Shift(m, 10, Direction.Horizontal);", "Shift needs a profile"),
    ("stratify_zero_strata", "GGE2716", "m.Stratify(0);", "Stratify: fewer than 1 stratum"),
    ("stratify_too_many_strata", "GGE2716", "m.Stratify(101);", "Stratify: more than 100 strata"),
    ("stratify_steepness", "GGE2715", "m.Stratify(5, 1.5);", "Stratify: a steepness outside [0, 1]"),
    ("stratify_smoothness", "GGE2715", "m.Stratify(5, 0.5, -0.5);", "Stratify: a smoothness outside [0, 1]"),
    ("transform_singular_matrix", "GGE2712", "m.Transform(1, 2, 2, 4);", "Transform: a matrix with determinant 0"),
    ("transform_heights_relative_start", "GGE2703", "m.TransformHeights(p, @0.1, 100);", "TransformHeights: profile positions must be absolute"),
    ("transform_heights_reversed_heights", "GGE2705", "m.TransformHeights(p, 0, 100, 0.5, 0.2);", "TransformHeights: minHeight above maxHeight"),
    ("unify_without_arguments", "GGE2103", "m.Unify();", "Unify needs a map"),
    # HeightProfile statics
    ("profile_flat_height", "GGE2303", "HeightProfile.Flat(2);", "HeightProfile.Flat: a height outside [-1, 1]"),
    ("profile_from_array_string_key", "GGE2706", 'HeightProfile.FromArray({"a": 0.5});', "FromArray: a position that is not a Number (the original ignored it)"),
    ("profile_from_array_string_value", "GGE2707", 'HeightProfile.FromArray({0: "a"});', "FromArray: a height that is not a Number (the original ignored it)"),
    ("profile_from_array_relative_without_direction", "GGE2703", "HeightProfile.FromArray({@0.5: 0.5});", "FromArray: a relative position needs a direction"),
    ("profile_from_array_height", "GGE2303", "HeightProfile.FromArray({0: 2});", "FromArray: a height outside [-1, 1]"),
    ("profile_gradient_relative", "GGE2703", "HeightProfile.Gradient(@0.1, 10, 0, 1);", "HeightProfile.Gradient: positions must be absolute"),
    ("profile_gradient_height", "GGE2303", "HeightProfile.Gradient(0, 10, 2, 0);", "HeightProfile.Gradient: a height outside [-1, 1]"),
    ("profile_noise_zero_wavelength", "GGE2710", "HeightProfile.Noise({0: 1});", "HeightProfile.Noise: a wavelength below 1"),
    ("profile_pattern_missing_end", "GGE2103", "HeightProfile.Pattern(p, 0);", "HeightProfile.Pattern needs an interval"),
    ("profile_slice_of_a_profile", "GGE2101", "HeightProfile.Slice(p, Direction.Horizontal, 0);", "Slice needs a map"),
    ("profile_clone_of_a_map", "GGE2101", "HeightProfile.Clone(m);", "HeightProfile.Clone needs a profile"),
    # HeightProfile methods
    ("profile_blur_negative_radius", "GGE2309", "p.Blur(-1);", "profile Blur: a negative radius"),
    ("profile_clamp_heights_reversed", "GGE2705", "p.ClampHeights(1, 0);", "profile ClampHeights: min above max (the original did not check)"),
    ("profile_crop_relative", "GGE2703", "p.Crop(@0.1, 5);", "profile Crop: positions must be absolute"),
    ("profile_fill_interval_height", "GGE2303", "p.FillInterval(0, 5, 2);", "FillInterval: a height outside [-1, 1]"),
    ("profile_move_relative", "GGE2703", "p.Move(@0.5);", "profile Move: the offset must be absolute"),
    ("profile_rescale_above_ten", "GGE2714", "p.Rescale(20);", "profile Rescale: a scale above 10"),
    ("profile_combine_without_mask", "GGE2103", "p.Combine(p);", "profile Combine needs a mask"),
    ("profile_add_map_mask", "GGE2101", "p.Add(p, m);", "profile Add: the mask must be a profile"),
    ("profile_add_height_above_one", "GGE2303", "p.Add(1.5);", "profile Add: a Number addend is a height"),
]

PRELUDE = "var m = HeightMap.Flat(0.5);\nvar p = HeightProfile.Flat(0.5);\n"


def main():
    for old in os.listdir(HERE):
        if re.match(r"\d{3}_.*\.ggs$", old):
            os.remove(os.path.join(HERE, old))
    for number, (stem, code, call, description) in enumerate(CASES, start=1):
        if code == "ok":
            header = f"// expect: ok\n// {description}\n// (the call is on line 6)\n"
            body = PRELUDE + call + "\n"
        else:
            header = f"// expect-error: {code}\n// expect-line: 6\n// {description}\n"
            body = PRELUDE + call + " // error here\n"
        with open(os.path.join(HERE, f"{number:03}_{stem}.ggs"), "w") as f:
            f.write(header + body)
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
