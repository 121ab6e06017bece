//! The one table of GGE error codes.
//!
//! Codes of the original GeoGen keep their numbers (1xxx compiler, 2xxx runtime, 3xxx renderer, 4xxx
//! API and host, 5xxx internal, 6000 user error, 9000 test assertion). The two languages geogen added
//! have their own ranges: 7xxx Lodestone (71xx lexer, 72xx parser, 73xx generating) and 8xxx
//! Height-Slang (81xx syntax, 82xx configurable functions, 83xx evaluation, 84xx the Height-Slang
//! and picogen-noise operations). Other conditions the original did not
//! have get new numbers in the same families; they are marked `new` in the table.

use std::fmt;

/// Which stage of the pipeline reports the code.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    Lexer,
    Parser,
    Compiler,
    Metadata,
    Runtime,
    Renderer,
    Host,
    Internal,
    User,
    Test,
}

/// A GGE error code, e.g. `GGE2202`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub u16);

/// The row of the table for one code.
#[derive(Copy, Clone, Debug)]
pub struct ErrorInfo {
    pub code: ErrorCode,
    /// A short CamelCase name (the original's exception class where there was one).
    pub name: &'static str,
    pub stage: Stage,
    /// What the code means, one sentence.
    pub summary: &'static str,
    /// True for codes geogen added.
    pub new: bool,
}

impl ErrorCode {
    pub fn number(self) -> u16 {
        self.0
    }

    pub fn info(self) -> Option<&'static ErrorInfo> {
        TABLE.iter().find(|i| i.code == self)
    }

    /// Parses `GGE2202` or `2202`.
    pub fn parse(text: &str) -> Option<ErrorCode> {
        let digits = text.strip_prefix("GGE").unwrap_or(text);
        let n: u16 = digits.parse().ok()?;
        let code = ErrorCode(n);
        code.info().map(|_| code)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GGE{:04}", self.0)
    }
}

macro_rules! codes {
    ($( $ident:ident = $num:literal, $name:literal, $stage:ident, $new:literal, $summary:literal; )*) => {
        $( pub const $ident: ErrorCode = ErrorCode($num); )*
        /// Every code, in numeric order.
        pub const TABLE: &[ErrorInfo] = &[
            $( ErrorInfo { code: ErrorCode($num), name: $name, stage: Stage::$stage, summary: $summary, new: $new }, )*
        ];
    };
}

codes! {
    GGE1101 = 1101, "UnexpectedCharacter", Lexer, false, "A character that cannot start any token (identifiers are ASCII only).";
    GGE1102 = 1102, "InvalidEscapeSequence", Lexer, false, "A backslash in a string followed by something other than \\\\, \\\", n or t.";
    GGE1103 = 1103, "UnterminatedString", Lexer, true, "A string literal that is not closed before the end of the file.";
    GGE1104 = 1104, "UnterminatedComment", Lexer, true, "A /* block comment */ that is not closed before the end of the file.";
    GGE1105 = 1105, "NumberLiteralOutOfRange", Lexer, true, "A number literal too large to be represented (it would be infinite).";
    GGE1106 = 1106, "InvalidUtf8", Lexer, true, "The script is not valid UTF-8 text (reported at the first invalid byte).";
    GGE1107 = 1107, "ScriptTooLarge", Lexer, true, "The script is larger than the maximum script size.";
    GGE1201 = 1201, "UnexpectedToken", Parser, false, "A syntax error: the parser met a token it did not expect.";
    GGE1301 = 1301, "InvalidBreak", Compiler, false, "`break` outside a loop or switch.";
    GGE1303 = 1303, "InvalidContinue", Compiler, false, "`continue` outside a loop.";
    GGE1304 = 1304, "InvalidReturn", Compiler, false, "`return` outside a function.";
    GGE1306 = 1306, "FunctionRedefinition", Compiler, false, "A function whose name is already taken by another function, native or script.";
    GGE1307 = 1307, "ReadOnlyExpressionWrite", Compiler, false, "An assignment, `++` or `--` applied to something that is not a variable, member or array item.";
    GGE1308 = 1308, "TypeRedefinition", Compiler, false, "An enum whose name is already taken by a type.";
    GGE1309 = 1309, "EnumItemRedefinition", Compiler, false, "Two items of one enum with the same name.";
    GGE1310 = 1310, "InvalidEnumValue", Compiler, false, "An enum item value that is not an integer.";
    GGE1311 = 1311, "ReservedTypeName", Compiler, false, "An enum named `Type`, which is reserved.";
    GGE1312 = 1312, "MainMapNotSupported", Compiler, false, "The script has no `yield` of the map \"main\".";
    GGE1313 = 1313, "DuplicateSwitchDefault", Compiler, true, "A `switch` with more than one `default` label.";
    GGE1314 = 1314, "InvalidDeclarationPlace", Compiler, true, "A declaration where it is not allowed (a statement or second metadata block before `metadata`).";
    GGE1315 = 1315, "InvalidMapName", Compiler, true, "A `yield ... as \"name\"` whose name is not 1-64 characters of A-Z, a-z, 0-9, `_`, `-` (not starting with `-`, not a Windows device name).";
    GGE1401 = 1401, "MetadataKeyRedefinition", Metadata, false, "The same key twice in one metadata collection.";
    GGE1402 = 1402, "IncorrectParametersType", Metadata, false, "`Parameters` in metadata is not a key-value collection.";
    GGE1403 = 1403, "IncorrectParameterType", Metadata, false, "A script parameter's definition is not a key-value collection.";
    GGE1405 = 1405, "ScriptParameterTypeNotSpecified", Metadata, false, "A parameter whose type is not given and cannot be inferred, or whose name is reserved.";
    GGE1406 = 1406, "IncorrectParameterAttributeType", Metadata, false, "A parameter attribute (or Width/Height Default/Min/Max) of the wrong kind of value.";
    GGE1407 = 1407, "IncorrectParameterRestriction", Metadata, false, "An unknown `Restriction` (use Unrestricted, Integers, PowersOf2 or PowersOf10).";
    GGE1408 = 1408, "IncorrectWidthType", Metadata, false, "`Width` is neither Finite, Infinite nor a key-value collection.";
    GGE1409 = 1409, "IncorrectHeightType", Metadata, false, "`Height` is neither Finite, Infinite nor a key-value collection.";
    GGE1410 = 1410, "UndefinedMetadataIdentifier", Metadata, false, "An identifier in metadata that names nothing (an unknown enum item, or Width/Height other than Finite/Infinite).";
    GGE1411 = 1411, "IncorrectMapSizeValue", Metadata, false, "A map size Default/Min/Max that is not an integer in [1, 4294967293].";
    GGE1412 = 1412, "MinGreaterThanMaxSize", Metadata, false, "A map size Min greater than its Max.";
    GGE1413 = 1413, "IncorrectEnumParameterType", Metadata, false, "A parameter `Type` that names no enum type.";
    GGE1414 = 1414, "InvalidParameterRange", Metadata, true, "A Number parameter whose Min, Max and Default are inconsistent (Min > Max, a Default outside the range, or values that break the Restriction).";
    GGE2101 = 2101, "IncorrectArgumentType", Runtime, false, "A function was called with an argument of the wrong type.";
    GGE2102 = 2102, "IncorrectOperandType", Runtime, false, "An operator was applied to an operand of the wrong type.";
    GGE2103 = 2103, "NumberOfArguments", Runtime, false, "A function was called with the wrong number of arguments.";
    GGE2104 = 2104, "IncorrectConditionType", Runtime, false, "A condition (if, while, for, ?:, &&, ||) is not a Boolean.";
    GGE2106 = 2106, "NullReference", Runtime, false, "A member of null was read or called.";
    GGE2107 = 2107, "IncorrectYieldType", Runtime, false, "`yield` of something that is not a HeightMap.";
    GGE2108 = 2108, "ReadOnlyWrite", Runtime, false, "A write to a read-only variable or member (types, enum items, Parameters, Point.X).";
    GGE2201 = 2201, "UndefinedFunction", Runtime, false, "A call of a function or method that does not exist.";
    GGE2202 = 2202, "UndefinedVariable", Runtime, false, "A read or write of a variable or member that does not exist.";
    GGE2204 = 2204, "VariableRedefinition", Runtime, false, "A variable declared twice in one scope, or a global declared twice.";
    GGE2301 = 2301, "DivisionByZero", Runtime, false, "Division or remainder by zero.";
    GGE2302 = 2302, "NumberOverflow", Runtime, false, "An arithmetic result that is infinite, or an integer operand out of the 32-bit range.";
    GGE2303 = 2303, "HeightOverflow", Runtime, false, "A height outside [-1, 1], or a noise amplitude above 1.";
    GGE2304 = 2304, "CoordinateOverflow", Runtime, false, "A coordinate outside the 32-bit integer range once resolved.";
    GGE2305 = 2305, "AsinAcosDomain", Runtime, false, "Asin or Acos of a value outside [-1, 1].";
    GGE2306 = 2306, "LogDomain", Runtime, false, "Log of a non-positive number or with a non-positive base (or base 1).";
    GGE2307 = 2307, "SqrtDomain", Runtime, false, "Sqrt of a negative number.";
    GGE2308 = 2308, "NumberUnderflow", Runtime, false, "A computation with non-zero operands that underflowed to zero.";
    GGE2309 = 2309, "SizeOverflow", Runtime, false, "A size, radius, distance or count that is negative or too large.";
    GGE2501 = 2501, "CallStackOverflow", Runtime, false, "Too many nested function calls (call depth limit).";
    GGE2502 = 2502, "CodeBlockStackOverflow", Runtime, false, "Too many nested code blocks in one call.";
    GGE2503 = 2503, "ObjectStackOverflow", Runtime, false, "Too many values on the object stack.";
    GGE2504 = 2504, "RenderingSequenceTooLong", Runtime, false, "The script recorded more rendering steps than the limit.";
    GGE2505 = 2505, "ExecutionBudgetExceeded", Runtime, true, "The script executed more instructions than its budget (an endless loop?).";
    GGE2506 = 2506, "ArrayTooLarge", Runtime, true, "An array would grow past the array size limit.";
    GGE2507 = 2507, "StringTooLong", Runtime, true, "A string or message would grow past the string length limit.";
    GGE2508 = 2508, "ScriptHeapExhausted", Runtime, true, "The script's arrays, strings and kept messages would grow past the script heap limit.";
    GGE2601 = 2601, "EmptyArray", Runtime, false, "Front, Back or Pop of an empty array.";
    GGE2602 = 2602, "ArrayKeyNotFound", Runtime, false, "Reading or removing an array key that does not exist.";
    GGE2603 = 2603, "NullKey", Runtime, false, "`null` used as an array key.";
    GGE2604 = 2604, "ArrayIndexNotFound", Runtime, false, "An array position outside [0, Count()).";
    GGE2701 = 2701, "StringFormat", Runtime, false, "A bad `{n}` placeholder in a Print or TriggerError template.";
    GGE2702 = 2702, "InvalidEnumValue", Runtime, false, "`FromNumber` of a number that is no item of the enum.";
    GGE2703 = 2703, "UnknownRelativeCoordinateDirection", Runtime, false, "A relative coordinate where its direction (horizontal or vertical) cannot be known.";
    GGE2704 = 2704, "RelativeCoordinateInInfiniteDimension", Runtime, false, "A relative coordinate in a dimension where the map is infinite.";
    GGE2705 = 2705, "MaxLessThanMin", Runtime, false, "A range whose maximum is less than its minimum.";
    GGE2706 = 2706, "IncorrectProfileKeyType", Runtime, false, "A HeightProfile.FromArray key that is not a Number or Coordinate.";
    GGE2707 = 2707, "IncorrectProfileValueType", Runtime, false, "A HeightProfile.FromArray value that is not a Number.";
    GGE2708 = 2708, "IncorrectNoiseLayerKeyType", Runtime, false, "A noise layer wavelength (array key) that is not a Number.";
    GGE2709 = 2709, "IncorrectNoiseLayerValueType", Runtime, false, "A noise layer amplitude (array value) that is not a Number.";
    GGE2710 = 2710, "NonpositiveNoiseLayerWaveLength", Runtime, false, "A noise layer wavelength that is not positive.";
    GGE2711 = 2711, "NonpositiveNoiseLayerAmplitude", Runtime, false, "A noise layer amplitude that is not positive.";
    GGE2712 = 2712, "InvalidTransformationMatrix", Runtime, false, "A transformation whose matrix cannot be inverted (determinant 0).";
    GGE2713 = 2713, "InvalidPersistence", Runtime, false, "A noise persistence outside [0.1, 0.9].";
    GGE2714 = 2714, "InvalidScale", Runtime, false, "A scale factor outside [0.1, 10].";
    GGE2715 = 2715, "InvalidStrength", Runtime, false, "A strength, steepness or smoothness outside [0, 1].";
    GGE2716 = 2716, "InvalidNumberOfStrata", Runtime, false, "A number of strata or levels outside its range: [1, 100] for Stratify's strata, [1, 1000] for Terrace's levels.";
    GGE2730 = 2730, "UnknownInputMap", Runtime, true, "`HeightMap.Input(name)` of a name the host gave no input map for (`--input name=FILE`).";
    GGE2740 = 2740, "InvalidWavelength", Runtime, false, "A noise wavelength outside [1, 1e9] logical units.";
    GGE2741 = 2741, "InvalidOctaves", Runtime, false, "A number of noise octaves outside [1, 16].";
    GGE2742 = 2742, "InvalidNoiseFraction", Runtime, false, "A noise gain, per-octave weighting or cell jitter outside [0, 1].";
    GGE2743 = 2743, "InvalidLacunarity", Runtime, false, "A noise lacunarity (frequency ratio of octaves) outside [1, 16].";
    GGE2744 = 2744, "UnknownNoiseOption", Runtime, false, "A noise option (fractal kind, cellular output or distance, warp basis) that is none of its names.";
    GGE2750 = 2750, "InvalidErosionIterations", Runtime, true, "An erosion iteration count outside its range (ThermalErosion [0, 200], HydraulicErosion [0, 100]): each iteration widens the halo every tile must render.";
    GGE2751 = 2751, "InvalidErosionRate", Runtime, true, "An erosion parameter (talus, rain, evaporation, capacity, erosion or deposition rate) outside its range.";
    GGE2752 = 2752, "UnknownErosionOutput", Runtime, true, "A HydraulicErosion output that is not \"height\", \"flow\", \"erosion\" or \"deposition\".";
    GGE2753 = 2753, "InvalidGullyDepth", Runtime, true, "A Gullies depth outside [0, 1] (height units).";
    GGE2754 = 2754, "InvalidFanSlope", Runtime, true, "A HydraulicErosion fanSlope outside [0, 0.1] (height per map unit): the gradient deposits settle at, below their highest neighbour.";
    GGE2755 = 2755, "InvalidDrainageParameter", Runtime, true, "A Drainage parameter (duration, resolution, river width or depth, diffusion, or the exponents m and n) outside its range.";
    GGE2756 = 2756, "UnknownDrainageOutput", Runtime, true, "A Drainage output that is not \"height\", \"rivers\", \"lakes\" or \"flow\".";
    GGE2757 = 2757, "DrainageNeedsFiniteMap", Runtime, true, "Drainage on a map that is infinite in some direction: a whole-map drainage needs the whole map.";
    GGE2801 = 2801, "MainMapNotGenerated", Runtime, false, "The script finished without yielding the map \"main\".";
    GGE2802 = 2802, "DuplicateYieldName", Runtime, true, "The same map name was yielded twice.";
    GGE3001 = 3001, "MemoryLimit", Renderer, false, "Rendering would need more memory than the limit allows.";
    GGE3002 = 3002, "SolveGridTooLarge", Renderer, true, "A whole-map solve (Drainage) on a grid of more cells than the limit allows (`--max-solve-cells`): lower its resolution.";
    GGE3003 = 3003, "SolvesNestedTooDeep", Renderer, true, "Whole-map solves nested more deeply than the limit: a Drainage whose input goes through a Drainage whose input goes through one, and so on.";
    GGE4000 = 4000, "ApiUsage", Host, false, "The host (CLI or library caller) used the API incorrectly.";
    GGE4001 = 4001, "UnknownScriptParameter", Host, true, "A parameter was set that the script does not declare.";
    GGE4002 = 4002, "InvalidScriptParameterValue", Host, true, "A parameter value that cannot be read as the parameter's type.";
    GGE4003 = 4003, "InvalidMapSize", Host, true, "A map or render size, origin or scale outside what the script or geogen allows.";
    GGE4020 = 4020, "InvalidInputMap", Host, true, "An input height map (`--input name=FILE`) that cannot be read: a missing or unreadable file, an unsupported or corrupt format, a wrong R16 size, or dimensions beyond the input limits.";
    GGE4021 = 4021, "InvalidExportSettings", Host, true, "Export settings that cannot work together: a preset's size rules, splat layers, mesh or derived-map options.";
    GGE4022 = 4022, "OutputDirectoryBusy", Host, false, "Another geogen run is writing into the output directory (it holds the directory's lock).";
    GGE4023 = 4023, "CannotWriteOutput", Host, false, "An output cannot be written: no space left, no permission, a file or link where geogen's file or directory goes, two outputs of one name, or a directory of other tiles.";
    GGE4024 = 4024, "CannotReadFile", Host, false, "A script, rules or tiles file that cannot be read: missing, a directory, a named pipe, or no permission.";
    GGE4025 = 4025, "InstructionSetUnavailable", Host, false, "`GEOGEN_ISA` (or a host's choice of instruction set) names no instruction set, or one this processor lacks: use scalar, avx2 or avx512.";
    GGE4026 = 4026, "InvalidScriptFileName", Host, true, "A script file name the studio was asked to create or open that is not a plain `.ggs` name in its directory: a path, `..`, a hidden or overlong name, a character file systems refuse, or a link leading out of the directory.";
    GGE4027 = 4027, "ScriptFileExists", Host, true, "A new script's file name that is already taken: the studio never replaces a file it was asked to create.";
    GGE5000 = 5000, "InternalError", Internal, false, "An internal error in geogen (a bug: please report it).";
    GGE5001 = 5001, "IntermediateCode", Internal, false, "Inconsistent intermediate code (a compiler bug: please report it).";
    GGE6000 = 6000, "UserError", User, false, "The script called TriggerError.";
    GGE7101 = 7101, "LodestoneInvalidCharacter", Lexer, true, "Lodestone rules: a character where no token can start (a `]` outside a weight, a lone `;`).";
    GGE7102 = 7102, "LodestoneUnclosedQuote", Lexer, true, "Lodestone rules: a `'` quoted text that is not closed (an apostrophe needs `\\'` or quotes around it).";
    GGE7103 = 7103, "LodestoneUnclosedCode", Lexer, true, "Lodestone rules: embedded code in backquotes that is not closed, or empty.";
    GGE7104 = 7104, "LodestoneUnclosedWeight", Lexer, true, "Lodestone rules: a `[` weight that is not closed, empty, or nested in another weight.";
    GGE7105 = 7105, "LodestoneUnclosedName", Lexer, true, "Lodestone rules: a `<` that starts a nonterminal but has no `>`.";
    GGE7106 = 7106, "LodestoneTextAfterRule", Lexer, true, "Lodestone rules: text after the `;` that ends a rule, on the same line.";
    GGE7107 = 7107, "LodestoneRulesTooLarge", Lexer, true, "Lodestone rules larger than the size limit.";
    GGE7108 = 7108, "LodestoneInvalidUtf8", Lexer, true, "Lodestone rules that are not valid UTF-8 text.";
    GGE7201 = 7201, "LodestoneSyntaxError", Parser, true, "Lodestone rules: something that is not a rule `<name> => choices;` (a missing name or `=>`, a `=>` or comment inside a rule, leading or trailing spaces inside code or a weight in strict mode).";
    GGE7202 = 7202, "LodestoneEmptyRule", Parser, true, "Lodestone rules: a rule with nothing after `=>` (write `''` for an empty text).";
    GGE7203 = 7203, "LodestoneUnterminatedRule", Parser, true, "Lodestone rules: the text ends inside a rule (its `;` is missing).";
    GGE7204 = 7204, "LodestoneNoRules", Parser, true, "Lodestone rules: a text without any rule.";
    GGE7205 = 7205, "LodestoneInvalidWeight", Parser, true, "Lodestone rules: a weight that is not a number, or is negative, infinite or NaN.";
    GGE7206 = 7206, "LodestoneAllWeightsZero", Parser, true, "Lodestone rules: a rule whose choices all have weight 0.";
    GGE7301 = 7301, "LodestoneStepLimit", Runtime, true, "Lodestone: an expansion took more steps than the iteration limit (a rule that always refers to itself?).";
    GGE7302 = 7302, "LodestoneTooDeep", Runtime, true, "Lodestone: embedded code, weights and one-time rules nested deeper than the limit, or more work in all (steps and code instructions) than the limit of one generation.";
    GGE7303 = 7303, "LodestoneTextTooLong", Runtime, true, "Lodestone: a generated text longer than the limit.";
    GGE7304 = 7304, "LodestoneInvalidComputedWeight", Runtime, true, "Lodestone: a weight computed while generating that is not a number, or is negative, infinite or NaN.";
    GGE7305 = 7305, "LodestoneComputedWeightsAllZero", Runtime, true, "Lodestone: weights computed while generating that are all 0.";
    GGE7306 = 7306, "LodestoneOneTimeCycle", Runtime, true, "Lodestone: a one-time nonterminal `<$n>` needed while it is being expanded.";
    GGE7307 = 7307, "LodestoneCodeError", Runtime, true, "Lodestone: embedded code that is not one GeoGen Script expression, or fails when evaluated.";
    GGE7308 = 7308, "LodestoneCodeResult", Runtime, true, "Lodestone: embedded code whose value cannot become text (an Array, a map, a type).";
    GGE7309 = 7309, "LodestoneNotEnumerable", Runtime, true, "Lodestone: the outputs cannot be listed (infinitely many, more than the limit, more work than the enumeration's budget, or random numbers drawn by code).";
    GGE7310 = 7310, "LodestoneTooFewDistinct", Runtime, true, "Lodestone: `--distinct` could not find enough different names.";
    GGE7311 = 7311, "LodestoneUnknownRuleSet", Runtime, true, "`Names.Load` of a rule set that was not given with `--rules NAME=FILE`.";
    GGE7312 = 7312, "LodestoneUnknownStart", Runtime, true, "Lodestone: the start nonterminal has no rule.";
    GGE7313 = 7313, "LodestoneInvalidVariable", Runtime, true, "Lodestone: a variable for embedded code with a name that is not an identifier or is taken, or a value that is not a Number, Boolean or String.";
    GGE8101 = 8101, "HsUnknownToken", Parser, true, "Height-Slang: a character that cannot start an operand here (a number, x/y..., or `(`).";
    GGE8102 = 8102, "HsInvalidNumber", Parser, true, "Height-Slang: a `-` sign not followed by digits or `.` (`-x` is not a number; write `(neg x)`).";
    GGE8103 = 8103, "HsTooManyDots", Parser, true, "Height-Slang: a number with more than one `.`.";
    GGE8104 = 8104, "HsEmptyProgram", Parser, true, "Height-Slang: an empty (or whitespace-only) program or parameter program.";
    GGE8105 = 8105, "HsMissingOperand", Parser, true, "Height-Slang: a form ends (`)` or the end of the text) before all its operands were given.";
    GGE8106 = 8106, "HsMissingCloseParen", Parser, true, "Height-Slang: a form has all its operands but is not closed by `)` (an extra operand, or the text ends).";
    GGE8107 = 8107, "HsUnknownOperation", Parser, true, "Height-Slang: an operator name that is not one of + - * / ^ = <> < <= > >= and or xor min max delta inv sin cos floor abs trunc frac neg not sqrt ? if lerp self.";
    GGE8108 = 8108, "HsUndeclaredVariable", Parser, true, "Height-Slang: a variable the program does not have (a height map has x and y; persistence and level functions only x).";
    GGE8109 = 8109, "HsSelfArity", Parser, true, "Height-Slang: `self` with another number of arguments than the program has.";
    GGE8110 = 8110, "HsNestingTooDeep", Parser, true, "Height-Slang: forms (and parameter programs) nested deeper than the nesting limit.";
    GGE8111 = 8111, "HsInfiniteRecursion", Compiler, true, "Height-Slang: a `self` call that every evaluation reaches (no `?`, `if`, `and` or `or` guards it), so the recursion never ends.";
    GGE8201 = 8201, "HsConfigurableArity", Parser, true, "Height-Slang: a configurable function `[N Name ...]` whose arity N is not 2 (or, in the picogen-2008 dialect, is missing).";
    GGE8202 = 8202, "HsMissingBracket", Parser, true, "Height-Slang: a configurable function's `[...` is not closed by `]`.";
    GGE8203 = 8203, "HsBadParameterName", Parser, true, "Height-Slang: a configurable function's parameter name is missing or not alphanumeric.";
    GGE8204 = 8204, "HsMissingParameterValue", Parser, true, "Height-Slang: a configurable function's parameter name not followed by `(value)`.";
    GGE8205 = 8205, "HsUnclosedParameterValue", Parser, true, "Height-Slang: a parameter value whose `(` has no balancing `)`.";
    GGE8206 = 8206, "HsUnknownConfigurableFunction", Compiler, true, "Height-Slang: a configurable function other than LayeredNoise, Noise and Layers.";
    GGE8207 = 8207, "HsUnknownParameters", Compiler, true, "Height-Slang: parameters the configurable function does not have (all of them are listed).";
    GGE8208 = 8208, "HsInvalidParameterValue", Compiler, true, "Height-Slang: a parameter value that is not a number of the right kind, or an unknown filter.";
    GGE8209 = 8209, "HsPointCostTooHigh", Compiler, true, "Height-Slang: evaluating one point would take more operations than the limit (e.g. a huge layercount).";
    GGE8301 = 8301, "HsSelfDepthExceeded", Runtime, true, "Height-Slang: `self` recursion deeper than the depth limit at some point.";
    GGE8302 = 8302, "HsPointBudgetExceeded", Runtime, true, "Height-Slang: a recursive program took more operations at one point than the per-point limit.";
    GGE8401 = 8401, "HsArgumentOutOfRange", Runtime, true, "A Height-Slang or picogen-noise operation argument outside its range (unit size, frequency, layer count, seed).";
    GGE8402 = 8402, "UnknownChoice", Runtime, true, "A String argument that is none of the names the operation accepts (a Height-Slang dialect, a noise filter).";
    GGE9000 = 9000, "AssertionFailed", Test, false, "An AssertEquals in a test script failed.";
}

/// The table as Markdown, for `docs/error-codes.md`.
pub fn markdown_table() -> String {
    let mut out = String::from("| Code | Name | Stage | Meaning |\n|---|---|---|---|\n");
    for info in TABLE {
        let new = if info.new { " (new in geogen)" } else { "" };
        out.push_str(&format!(
            "| {} | {} | {:?} | {}{} |\n",
            info.code,
            info.name,
            info.stage,
            info.summary.replace('|', "\\|"),
            new
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_unique() {
        for pair in TABLE.windows(2) {
            assert!(pair[0].code < pair[1].code, "{} then {}", pair[0].code, pair[1].code);
        }
    }

    #[test]
    fn display_and_parse_round_trip() {
        assert_eq!(GGE2202.to_string(), "GGE2202");
        assert_eq!(ErrorCode::parse("GGE2202"), Some(GGE2202));
        assert_eq!(ErrorCode::parse("1404"), None);
        assert_eq!(GGE1101.info().map(|i| i.name), Some("UnexpectedCharacter"));
    }

    #[test]
    fn docs_table_is_current() {
        let doc = include_str!("../../../docs/error-codes.md");
        assert!(
            doc.contains(&markdown_table()),
            "docs/error-codes.md is out of date: regenerate it with `cargo run -p geogen-diag --example error_codes_doc > docs/error-codes.md`"
        );
    }
}
