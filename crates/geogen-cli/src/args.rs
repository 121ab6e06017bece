//! Command-line syntax (clap). Parsing of values that clap cannot check alone (sizes, points,
//! seeds) lives here too, so every command reads them the same way.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "geogen", version, about = "Programmable terrain generator: GeoGen Script to height maps")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compile a script and report every error, without running it.
    Check {
        /// The .ggs script.
        script: PathBuf,
        #[command(flatten)]
        source: SourceArgs,
    },
    /// Simulate a script: print its messages (no pixels are rendered).
    #[command(
        after_help = "Examples:\n  geogen run island.ggs -p Size=0.3 --seed 42\n  geogen run island.ggs --size 512 --bounds      # bounds, releases and peak memory per step"
    )]
    Run {
        /// The .ggs script.
        script: PathBuf,
        #[command(flatten)]
        settings: RunArgs,
        /// Also print the rendering sequence the script recorded.
        #[arg(long, help_heading = "Output")]
        sequence: bool,
        /// Print the rendering sequence annotated with each step's bounds, memory and the slots it
        /// releases, and the peak memory (implies --sequence).
        #[arg(long, help_heading = "Output")]
        bounds: bool,
    },
    /// Render the maps a script yields into files (the built-in example without SCRIPT).
    Render(RenderCmd),
    /// Render a region in square tiles, several at once; existing complete tiles are skipped.
    Tiles(TilesCmd),
    /// Describe a script: name, parameters, map size, the maps it yields.
    Info {
        /// The .ggs script.
        script: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Check a tiles directory written by one run or by shards (every tile present and intact,
    /// every shard with the same settings) and optionally write it as an XYZ web tile set.
    #[command(name = "finish-tiles")]
    FinishTiles(FinishTilesCmd),
    /// Open the studio: a local web page to edit a script and see its terrain (preview, 3D view,
    /// infinite-map view), which also serves tiles (docs/studio.md).
    Studio(StudioCmd),
    /// Serve the tiles of a script over HTTP (the studio's tile endpoint alone), for web maps.
    Serve(ServeCmd),
    /// Generate names from Lodestone rules, or list every name they can make (--enumerate).
    Names(NamesCmd),
    /// Height-Slang (picogen's mkheightmap language) tools.
    Slang {
        #[command(subcommand)]
        command: SlangCommand,
    },
    /// picogen's mkheightmap: a Height-Slang program to a text or BMP height map, with the
    /// original's flags (-Lhs PROGRAM -w W -h H -a N -W S -n -i -Et -Ebmp -En NAME -f; see --help).
    #[command(disable_help_flag = true)]
    Mkheightmap {
        /// mkheightmap's options, as the original reads them.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "OPTIONS")]
        args: Vec<String>,
    },
    /// Measure how height maps drain, as geomorphologists measure terrain: closed pits, the land
    /// draining into them, catchments, flow paths and the bias of directions to the pixel grid
    /// (steepest-descent flow with the map's edge and the sea as outlets; docs/erosion.md).
    #[command(after_help = "Examples:
  geogen measure out/main.tif
  geogen measure out/main.png --sea 0.05 --json")]
    Measure {
        /// Height maps: 16-bit PNG, float TIFF, EXR, or raw R16 (FILE:WxH unless square).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        /// The sea level: heights at or below it are sea (an outlet, not land).
        #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
        sea: f32,
        /// Print one JSON array with an object per file.
        #[arg(long)]
        json: bool,
    },
    /// Run test scripts with the test library (AssertEquals); the main map is not required.
    Test {
        /// Test scripts.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print one JSON array with an object per file.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        limits: LimitArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum SlangCommand {
    /// Print the value of a program at one point, as the shortest decimal that reads back as the
    /// same double.
    #[command(
        after_help = "Examples:\n  geogen slang eval '(+ 0.5 ([2 LayeredNoise] x y))' --at 0.25,0.75\n  geogen slang eval '(>= 1 1)' --at 0,0 --compat picogen-2008"
    )]
    Eval {
        /// The Height-Slang program (variables x and y).
        #[arg(allow_hyphen_values = true)]
        program: String,
        /// The point, `X,Y` (may be negative: `--at=-1,0.5`).
        #[arg(long, value_name = "X,Y", allow_hyphen_values = true, value_parser = parse_real_point)]
        at: (f64, f64),
        /// `picogen-2008`: the original's semantics where they differ from the documented ones.
        #[arg(long, value_name = "DIALECT")]
        compat: Option<String>,
        /// Nested `self` calls allowed (default 1000; GGE8301).
        #[arg(long = "max-call-depth", value_name = "N")]
        max_call_depth: Option<usize>,
        /// Operations one point may cost (default 100000; GGE8209, GGE8302).
        #[arg(long = "max-point-ops", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        max_point_ops: Option<u64>,
    },
}

/// The language of a script file.
#[derive(clap::ValueEnum, Copy, Clone, Debug, PartialEq, Eq)]
pub enum Lang {
    // GeoGen Script (the default, except for .hs files). No doc comments here: clap would switch
    // every command's help to its long layout to list them.
    Ggs,
    // Height-Slang, picogen's mkheightmap language (the default for .hs files).
    #[value(name = "hs", alias = "height-slang")]
    HeightSlang,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  geogen render island.ggs -o out --size 1024 --seed 7 -p Size=0.3
  geogen render dunes.ggs --origin=-500,-500 --size 2000x1000 --scale 0.5 --format r16,hillshade
  geogen render refine.ggs --input base=sketch.png --format png16,normal,splat,glb --height-scale 250
  geogen render island.ggs --preset unity --size 1025 --map-size 1025x1025   # main.r16 + main.unity.json
  geogen render                              # the built-in example island, into the current directory")]
pub struct RenderCmd {
    /// The .ggs script; without it, the built-in example (an island) is rendered.
    pub script: Option<PathBuf>,
    #[command(flatten)]
    pub settings: RunArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Print how long each rendering step took (ms, ns per pixel, and the multiple of a plain copy
    /// of the map measured in the same process); fused passes show as one line.
    #[arg(long, help_heading = "Output")]
    pub profile: bool,
    /// Print the time spent simulating, rendering and writing, the peak memory (measured and
    /// planned) and the thread count, as `key=value` fields on one line.
    #[arg(long, help_heading = "Output")]
    pub stats: bool,
    /// Draw the script's labels (Names.PlaceLabel) on the colored previews.
    #[arg(long = "draw-labels", help_heading = "Output")]
    pub draw_labels: bool,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  geogen tiles dunes.ggs --region=-2048,-2048,4096,4096 --tile 512 -o tiles --format r16
  geogen tiles island.ggs --map-size 2000x2000 --region 0,0,2000,2000 --tile 500 -o tiles
  geogen tiles world.ggs --preset unreal --region 0,0,4032,4032 --tile 1008 -o unreal   # main_x0_y0.png ...

Files are named tile_X_Y_MAP.EXT after their first pixel. Run the same command again to resume:
tiles whose files are all present and intact are skipped. The directory's manifest (geogen-tiles.json)
records the settings; a run with other settings refuses unless --restart is given. A larger region on
the same tile grid, more formats or more maps are allowed. Without --map-size a finite map is the
region's size.")]
pub struct TilesCmd {
    /// The .ggs script.
    pub script: PathBuf,
    /// The region to render in pixels, `X,Y,W,H` (X and Y may be negative).
    #[arg(long, value_name = "X,Y,W,H", allow_hyphen_values = true, value_parser = parse_region)]
    pub region: (i64, i64, u32, u32),
    /// Tile side in pixels.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub tile: u32,
    /// Delete the tiles of an earlier run in the directory (the files its markers list, and its
    /// manifest) and start over, instead of refusing when the settings differ.
    #[arg(long)]
    pub restart: bool,
    /// Refuse a region of more tiles than this.
    #[arg(long = "max-tiles", value_name = "N", default_value_t = DEFAULT_MAX_TILES)]
    pub max_tiles: u64,
    /// Render only the I-th of N disjoint, balanced parts of the tiles (every N-th block of tiles
    /// from the I-th), so N processes on N machines writing into one shared directory make the tiles of one
    /// run. `--shard N` alone reads I from JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs) or
    /// SLURM_ARRAY_TASK_ID (Slurm job arrays, numbered from 0). Check the result
    /// with `geogen finish-tiles DIR`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(Option<u64>, u64)>,
    /// Render blocks of N × N tiles at once and cut them apart (the same bytes as tiles rendered one by
    /// one; a block pays the script's simulation and its operations' halo once). Default: as many
    /// tiles as fit in 4096 pixels a side, halved until a block's memory plan fits the memory
    /// limit (2048 with --shard, the same on every machine); 1 renders every tile alone, using the
    /// least memory.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub block: Option<u32>,
    #[command(flatten)]
    pub script_args: ScriptArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `geogen finish-tiles`: check a (sharded) tiles directory and write a web tile set.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  geogen finish-tiles world                                  # check: every tile present and intact, one setting
  geogen finish-tiles world --xyz web --map main --format colored   # and write web/{z}/{x}/{y}.png
  geogen finish-tiles world --pmtiles dem.pmtiles --format terrarium --height-scale 800   # 3D terrain for web maps
  geogen finish-tiles world --cog world.tif --pixel-size 30 --geo-origin 7.5,46   # one GeoTIFF for GIS

Exit status 0 when the directory is complete and consistent, 1 when it is not (each problem is
listed), 2 when it cannot be read.")]
pub struct FinishTilesCmd {
    /// The directory `geogen tiles` wrote into (by one run or by shards).
    pub dir: PathBuf,
    /// Also write an XYZ tile set (`{z}/{x}/{y}.png`, 256-pixel RGBA tiles, zoom 0 the whole region,
    /// the deepest zoom one tile pixel per rendered pixel) into this directory.
    #[arg(long, value_name = "OUT")]
    pub xyz: Option<PathBuf>,
    /// Also write the tile set as one PMTiles (v3) archive, `OUT.pmtiles` (the same tiles as --xyz,
    /// stored once each; directories gzip-compressed unless --pmtiles-compression none).
    #[arg(long, value_name = "FILE")]
    pub pmtiles: Option<PathBuf>,
    /// Compression of the PMTiles directories and metadata: gzip or none (the PNG tiles are stored as
    /// they are).
    #[arg(long, value_name = "KIND", default_value = "gzip", value_parser = ["gzip", "none"])]
    pub pmtiles_compression: String,
    /// Also write the region's heights as one cloud-optimised GeoTIFF (float32 metres, tiled, with
    /// overviews; georeferenced with --geo-origin), made from the tiles' heights (tiff, exr or
    /// png16).
    #[arg(long, value_name = "FILE")]
    pub cog: Option<PathBuf>,
    /// The map the tile set and GeoTIFF show.
    #[arg(long, value_name = "NAME", default_value = "main")]
    pub map: String,
    /// What the tile set shows: colored, png8 or hillshade (the tiles' 8-bit previews), or
    /// terrarium or terrain-rgb (elevations for web maps' 3D terrain, made from the tiles' heights:
    /// tiff, exr or png16).
    #[arg(long, value_name = "FORMAT", default_value = "colored")]
    pub format: String,
    #[command(flatten)]
    pub scale: FinishScaleArgs,
    /// Replace the --pmtiles archive or --cog file if it exists (without it an existing file is
    /// refused).
    #[arg(long)]
    pub force: bool,
    /// No summary.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The metres of a finished tile set's elevations and GeoTIFF, as `geogen render` takes them.
#[derive(Args, Debug)]
pub struct FinishScaleArgs {
    /// Metres between two pixels of the tiles (the GeoTIFF's pixel size).
    #[arg(long = "pixel-size", value_name = "M", default_value_t = 1.0)]
    pub pixel_size: f64,
    /// Metres of the height 1.0 (-1.0 is minus that) in elevation tiles and the GeoTIFF.
    #[arg(long = "height-scale", value_name = "M", default_value_t = 100.0)]
    pub height_scale: f64,
    /// Where the map's origin lies on the Earth, `LON,LAT` in degrees: the GeoTIFF is then in Web
    /// Mercator (EPSG:3857), as `geogen render --format cog --geo-origin` places it.
    #[arg(long = "geo-origin", value_name = "LON,LAT", allow_hyphen_values = true)]
    pub geo_origin: Option<String>,
}

/// `I/N` (0 <= I < N) or `N` (the index comes from the environment).
pub fn parse_shard(text: &str) -> Result<(Option<u64>, u64), String> {
    let number = |t: &str| t.trim().parse::<u64>().map_err(|_| format!("`{text}` is not I/N or N (whole numbers)"));
    let (index, count) = match text.split_once('/') {
        Some((i, n)) => (Some(number(i)?), number(n)?),
        None => (None, number(text)?),
    };
    if count == 0 {
        return Err("the number of shards must be at least 1".into());
    }
    if let Some(i) = index {
        if i >= count {
            return Err(format!("shard {i} of {count} does not exist: shards are numbered 0 to {}", count - 1));
        }
    }
    Ok((index, count))
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  geogen studio island.ggs                   # edit island.ggs; Save writes it back
  geogen studio hills.ggs                    # a new script: starts from a template
  geogen studio                              # the built-in example (cannot be saved)
  geogen studio dunes.ggs --port 9000

The server listens on 127.0.0.1 only (unless --host says otherwise) and prints the URL to open; the
URL carries a random token that every request must show. It reads and writes only .ggs scripts of
SCRIPT's directory (the page's New, Open and Examples; a file is never replaced unasked), and
writes exports only into the export directory.")]
pub struct StudioCmd {
    /// The .ggs script to edit (created on the first save if it does not exist); without it, the
    /// built-in example.
    pub script: Option<PathBuf>,
    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8470)]
    pub port: u16,
    /// The address to listen on. Anything but a loopback address lets other machines reach the
    /// studio (they still need the token).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// A host name requests may use besides localhost and IP addresses (repeatable): the name
    /// other machines reach this one by. Requests naming any other host are refused.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// Only pages of this origin (`https://maps.example.org`, repeatable) may read the tiles;
    /// without it, pages of any origin may (the token still guards every tile).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub tile_origins: Vec<String>,
    /// Memory each render may use, in MiB (default: a quarter of this machine's memory).
    #[arg(long = "memory-limit", value_name = "MIB")]
    pub memory_limit: Option<u64>,
    /// Where the page's Export writes its files (default: SCRIPT's stem + `-export/` next to it,
    /// `island-export/` for the built-in example); created on the first export.
    #[arg(long = "export-dir", value_name = "DIR")]
    pub export_dir: Option<PathBuf>,
    /// Memory for cached tiles, in MiB (0 keeps none).
    #[arg(long = "cache-mb", value_name = "MIB", default_value_t = 64)]
    pub cache_mb: u64,
    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  geogen serve dunes.ggs --seed 7 -p Wavelength=128
  geogen serve island.ggs --map-size 4000x4000 --port 9000

Tiles are /tiles/MAP/Z/X/Y.png?token=T, 256 pixels square; zoom 8 is scale 1 and each zoom level
halves or doubles the scale; the map's origin is the top-left corner of tile (0, 0). Query
parameters kind (colored, hillshade, gray, terrarium, terrain-rgb), seed, map (WxH) and p.NAME override the
defaults given here. See docs/studio.md.")]
pub struct ServeCmd {
    /// The .ggs script (read once, at start).
    pub script: PathBuf,
    /// The port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8471)]
    pub port: u16,
    /// The address to listen on. Anything but a loopback address lets other machines reach the
    /// tiles (they still need the token).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// A host name requests may use besides localhost and IP addresses (repeatable): the name
    /// other machines reach this one by. Requests naming any other host are refused.
    #[arg(long = "allowed-host", value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// Set a script parameter for every tile (repeatable; a request's p.NAME overrides it).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// The seed of every tile unless a request gives its own: a number is used as is, any other
    /// text is hashed.
    #[arg(long, default_value = "0", allow_negative_numbers = true)]
    pub seed: String,
    /// The map size of a finite script, `WxH` (default: its declared default, else 1000).
    #[arg(long = "map-size", value_name = "WxH", value_parser = parse_size)]
    pub map_size: Option<(u32, u32)>,
    /// Memory each tile's render may use, in MiB (default: a quarter of this machine's memory).
    #[arg(long = "memory-limit", value_name = "MIB")]
    pub memory_limit: Option<u64>,
    /// Memory for cached tiles, in MiB (0 keeps none).
    #[arg(long = "cache-mb", value_name = "MIB", default_value_t = 64)]
    pub cache_mb: u64,
    /// Place the map on the Earth: its origin (map coordinate 0, 0) at `LON,LAT` in degrees. The
    /// tiles are then Web Mercator's, as every web map asks for them (MapLibre, Leaflet,
    /// OpenLayers), and the TileJSON gives the map's bounds and centre.
    #[arg(long = "geo-origin", value_name = "LON,LAT", allow_hyphen_values = true)]
    pub geo_origin: Option<String>,
    /// Metres on the ground of one map unit at the --geo-origin: the zooms follow from it (those
    /// whose tile pixel spans from 256 map units down to an eighth of one).
    #[arg(long = "pixel-size", value_name = "M", default_value_t = 10.0, requires = "geo_origin")]
    pub pixel_size: f64,
    /// Metres of the height 1.0 in terrarium and terrain-rgb tiles (-1.0 is minus that) and, with
    /// --geo-origin, in the hillshade. At most 30000 (Terrarium's range).
    #[arg(long = "height-scale", value_name = "M", default_value_t = geogen_studio::DEFAULT_TILE_HEIGHT_SCALE)]
    pub height_scale: f64,
    /// Only pages of this origin (`https://maps.example.org`, repeatable) may read the tiles;
    /// without it, pages of any origin may (the token still guards every tile).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub tile_origins: Vec<String>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  geogen names examples/names/rivers.lds -n 10 --seed 7
  geogen names examples/names/peaks.lds --start '<peak>' --var height=0.9 --distinct -n 5
  geogen names examples/names/rivers.lds --enumerate --start '<river-word>'

The n-th name depends only on the rules, the start, the seed and n: asking for more names does not
change the first ones. The language is described in docs/lodestone.md.")]
pub struct NamesCmd {
    /// The Lodestone rule file (.lds).
    pub rules: PathBuf,
    /// The nonterminal to start from, `<name>` or `name` (default: the first rule).
    #[arg(long, value_name = "NAME")]
    pub start: Option<String>,
    /// How many names to print.
    #[arg(short = 'n', long = "count", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub count: u32,
    /// The seed: a number is used as is, any other text is hashed.
    #[arg(long, default_value = "0", allow_negative_numbers = true)]
    pub seed: String,
    /// A read-only variable for embedded code, `NAME=VALUE` (repeatable); a number, true, false
    /// or text.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub vars: Vec<(String, String)>,
    /// No name twice: a repeat is drawn again, up to --max-tries times (GGE7310 after).
    #[arg(long)]
    pub distinct: bool,
    /// Draws per name with --distinct.
    #[arg(long = "max-tries", value_name = "N", default_value_t = 100)]
    pub max_tries: u32,
    /// Print every possible output with its exact probability, most likely first (finite rule
    /// sets whose code draws no random numbers; GGE7309 otherwise).
    #[arg(long, conflicts_with_all = ["count", "distinct"])]
    pub enumerate: bool,
    /// Outputs --enumerate lists at most.
    #[arg(long = "max-outputs", value_name = "N", default_value_t = 10_000)]
    pub max_outputs: usize,
    /// Print JSON: an array of names, or with --enumerate an array of {"text", "p", "fraction"}.
    #[arg(long)]
    pub json: bool,
    /// Read the rules as the original Lodestone did: no escapes, code and weights re-read as
    /// rules, weights read by parseFloat.
    #[arg(long)]
    pub strict: bool,
    /// Steps one expansion may take (the original's iteration guard; GGE7301).
    #[arg(long = "max-steps", value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub max_steps: u64,
    /// At the step limit, keep the text so far and warn, as the original did, instead of failing.
    #[arg(long)]
    pub truncate: bool,
    /// Instructions one piece of embedded code may execute (default 1000000; GGE7307).
    #[arg(long = "max-code-instructions", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_code_instructions: Option<u64>,
    /// Units of work one name may take, or --enumerate all its paths together: a step of the
    /// rules, an instruction of their code, 16 bytes of text (GGE7302; with --enumerate GGE7309).
    #[arg(long = "max-work", value_name = "N", default_value_t = geogen::names::DEFAULT_MAX_WORK,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_work: u64,
}

/// The default of `tiles --max-tiles`: enough for a 100 000² map in 100-pixel tiles.
pub const DEFAULT_MAX_TILES: u64 = 1_000_000;

/// Where and how rendered maps are written.
#[derive(Args, Debug)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Output directory (created if missing).
    #[arg(short = 'o', long = "output", value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Formats, comma-separated: png16 (default; with --preset the engine's height format), png8,
    /// r16, tiff, exr, colored, hillshade; derived maps normal, slope, curvature, splat; meshes glb,
    /// obj.
    #[arg(long, value_name = "LIST")]
    pub format: Option<String>,
    /// Only render these yielded maps, comma-separated.
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub maps: Option<Vec<String>>,
    /// Memory the renderer may use, in MiB (default: a quarter of this machine's memory); `tiles`
    /// keeps the renders it runs at once within it together.
    #[arg(long = "memory-limit", value_name = "MIB")]
    pub memory_limit: Option<u64>,
    /// The most grid cells a whole-map solve (`Drainage`) may have (default 33554432, a 4096²
    /// solve and more); a larger one is refused (GGE3002) before anything is rendered.
    #[arg(long = "max-solve-cells", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_solve_cells: Option<u64>,
    /// No progress bar and no summary (the script's messages are still printed).
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub export: crate::export::ExportArgs,
}

/// Script settings shared by every command that runs a script.
#[derive(Args, Debug, Clone, Default)]
pub struct ScriptArgs {
    /// A script parameter, `NAME=VALUE` (repeatable).
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// The seed: a number is used as is, any other text is hashed (as the original does).
    #[arg(long, default_value = "0", allow_negative_numbers = true)]
    pub seed: String,
    /// Map size of a finite map, `WxH` (default: the render size divided by the scale).
    #[arg(long = "map-size", value_name = "WxH", value_parser = parse_size)]
    pub map_size: Option<(u32, u32)>,
    /// Render scale: 1 = one pixel per map unit, 0.5 = zoomed out twice.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub scale: f64,
    /// A height map the script reads with `HeightMap.Input("NAME")` (repeatable): 8/16-bit PNG,
    /// 8/16-bit or float TIFF, EXR, or raw R16 (`NAME=FILE:WxH` unless square).
    #[arg(long = "input", value_name = "NAME=FILE", value_parser = crate::export::parse_input)]
    pub inputs: Vec<crate::export::InputArg>,
    /// A Lodestone rule file the script can load by name with Names.Load("NAME"), `NAME=FILE` or
    /// `FILE` (named after the file, without extension); repeatable.
    #[arg(long = "rules", value_name = "NAME=FILE", value_parser = parse_rules)]
    pub rules: Vec<(String, std::sync::Arc<str>)>,
    /// The script's language: ggs (GeoGen Script), or hs (Height-Slang, the default for .hs files).
    #[arg(long, value_enum, value_name = "LANG")]
    pub lang: Option<Lang>,
    /// Height-Slang only: picogen-2008 for the original's semantics (docs/height-slang.md).
    #[arg(long, value_name = "DIALECT")]
    pub compat: Option<String>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// `--rules NAME=FILE` or `--rules FILE`: the name and the file's text (UTF-8, at most the rule size
/// limit). The rules are parsed when the script uses them, which reports errors with line:column.
pub fn parse_rules(text: &str) -> Result<(String, std::sync::Arc<str>), String> {
    let (name, path) = match text.split_once('=') {
        Some((name, path)) if !name.is_empty() => (name.to_string(), PathBuf::from(path)),
        _ => {
            let path = PathBuf::from(text);
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            (stem, path)
        }
    };
    if name.is_empty() {
        return Err(format!("`{text}` names no rule set; write NAME=FILE"));
    }
    let limit = geogen::names::DEFAULT_MAX_RULES_BYTES;
    let bytes = geogen::read_script(&path, limit)
        .map_err(|e| format!("{}: cannot read `{}`: {e}", geogen::diag::codes::GGE4024, path.display()))?;
    if bytes.len() > limit {
        return Err(format!("`{}` is larger than the limit of {limit} bytes for rules", path.display()));
    }
    let text = String::from_utf8(bytes).map_err(|_| format!("`{}` is not UTF-8 text", path.display()))?;
    Ok((name, std::sync::Arc::from(text)))
}

/// How large a script file may be.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Limits")]
pub struct SourceArgs {
    /// Largest script accepted, in MiB (default 4; GGE1107).
    #[arg(long = "max-script-size", value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_script_size: Option<u64>,
}

/// The limits of a script run (spec §6), each with the error it prevents; unset ones keep the
/// library defaults.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Limits")]
pub struct LimitArgs {
    /// Instructions a run may execute (default 100000000; GGE2505).
    #[arg(long = "max-instructions", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_instructions: Option<u64>,
    /// Nested function calls (default 1000; GGE2501).
    #[arg(long = "max-call-depth", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_call_depth: Option<u64>,
    /// Nested code blocks within one call (default 1000; GGE2502).
    #[arg(long = "max-block-depth", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_block_depth: Option<u64>,
    /// Values on the object stack (default 100000; GGE2503).
    #[arg(long = "max-object-stack", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_object_stack: Option<u64>,
    /// Rendering steps (map operations) a run may record (default 100000; GGE2504).
    #[arg(long = "max-steps", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_steps: Option<u64>,
    /// Items in one array (default 10000000; GGE2506).
    #[arg(long = "max-array-len", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_array_len: Option<u64>,
    /// Bytes in one string (default 10000000; GGE2507).
    #[arg(long = "max-string-len", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_string_len: Option<u64>,
    /// MiB the script's live arrays, strings and kept messages may hold (default 1024; GGE2508).
    #[arg(long = "max-heap", value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_heap: Option<u64>,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Settings of `run` and `render`.
#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    #[command(flatten)]
    pub script: ScriptArgs,
    /// Render size in pixels, `WxH` (or one number for a square).
    #[arg(long, value_name = "WxH", value_parser = parse_size, help_heading = "Render rectangle")]
    pub size: Option<(u32, u32)>,
    /// Top-left corner of the render in pixels, `X,Y` (may be negative: `--origin=-500,-500`).
    #[arg(long, value_name = "X,Y", allow_hyphen_values = true, value_parser = parse_point, help_heading = "Render rectangle")]
    pub origin: Option<(i64, i64)>,
}

pub fn parse_param(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok((name.trim().to_string(), value.to_string())),
        _ => Err(format!("`{text}` is not NAME=VALUE")),
    }
}

/// `800x600`, `800X600` or `512` (square).
pub fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let parse = |s: &str| -> Result<u32, String> {
        let digits = s.trim();
        let n: u32 = digits.parse().map_err(|_| {
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                format!("`{s}` pixels is too large: the largest size is {}", u32::MAX)
            } else {
                format!("`{s}` is not a whole number of pixels")
            }
        })?;
        if n == 0 {
            return Err("a size must be at least 1".to_string());
        }
        Ok(n)
    };
    match text.split_once(['x', 'X']) {
        Some((w, h)) => Ok((parse(w)?, parse(h)?)),
        None => {
            let n = parse(text)?;
            Ok((n, n))
        }
    }
}

fn parse_i64(s: &str) -> Result<i64, String> {
    s.trim().parse().map_err(|_| format!("`{s}` is not a whole number"))
}

/// `X,Y`, e.g. `-500,-500`.
pub fn parse_point(text: &str) -> Result<(i64, i64), String> {
    match text.split_once(',') {
        Some((x, y)) => Ok((parse_i64(x)?, parse_i64(y)?)),
        None => Err(format!("`{text}` is not X,Y")),
    }
}

/// `X,Y` of real numbers, e.g. `-1,0.5`.
pub fn parse_real_point(text: &str) -> Result<(f64, f64), String> {
    let parse = |s: &str| s.trim().parse::<f64>().map_err(|_| format!("`{s}` is not a number"));
    match text.split_once(',') {
        Some((x, y)) => Ok((parse(x)?, parse(y)?)),
        None => Err(format!("`{text}` is not X,Y")),
    }
}

/// `X,Y,W,H` with W, H at least 1.
pub fn parse_region(text: &str) -> Result<(i64, i64, u32, u32), String> {
    let parts: Vec<&str> = text.split(',').collect();
    let [x, y, w, h] = parts[..] else {
        return Err(format!("`{text}` is not X,Y,W,H"));
    };
    let (w, h) = parse_size(&format!("{w}x{h}"))?;
    Ok((parse_i64(x)?, parse_i64(y)?, w, h))
}

impl SourceArgs {
    pub fn max_script_bytes(&self) -> usize {
        self.max_script_size.map_or(geogen::DEFAULT_MAX_SCRIPT_BYTES, |mib| usize_of(mib.saturating_mul(1 << 20)))
    }
}

impl LimitArgs {
    /// The library's limits with the ones given on the command line.
    pub fn limits(&self) -> geogen::Limits {
        let defaults = geogen::Limits::default();
        let count = |flag: Option<u64>, default: usize| flag.map_or(default, usize_of);
        geogen::Limits {
            instruction_budget: self.max_instructions.unwrap_or(defaults.instruction_budget),
            max_call_depth: count(self.max_call_depth, defaults.max_call_depth),
            max_block_depth: count(self.max_block_depth, defaults.max_block_depth),
            max_object_stack: count(self.max_object_stack, defaults.max_object_stack),
            max_rendering_steps: count(self.max_steps, defaults.max_rendering_steps),
            max_array_len: count(self.max_array_len, defaults.max_array_len),
            max_string_len: count(self.max_string_len, defaults.max_string_len),
            max_heap_bytes: self.max_heap.map_or(defaults.max_heap_bytes, |mib| mib.saturating_mul(1 << 20)),
        }
    }
}

/// A count from the command line; beyond what this machine can address it is as good as no limit.
fn usize_of(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_flags_set_every_vm_limit_and_keep_the_rest() {
        let cli = Cli::try_parse_from([
            "geogen",
            "run",
            "s.ggs",
            "--max-instructions",
            "5",
            "--max-call-depth",
            "6",
            "--max-block-depth",
            "7",
            "--max-object-stack",
            "8",
            "--max-steps",
            "9",
            "--max-array-len",
            "10",
            "--max-string-len",
            "11",
            "--max-heap",
            "12",
            "--max-script-size",
            "2",
        ])
        .unwrap();
        let Command::Run { settings, .. } = cli.command else { panic!("not run") };
        let limits = settings.script.limits.limits();
        let expected = geogen::Limits {
            instruction_budget: 5,
            max_call_depth: 6,
            max_block_depth: 7,
            max_object_stack: 8,
            max_rendering_steps: 9,
            max_array_len: 10,
            max_string_len: 11,
            max_heap_bytes: 12 << 20,
        };
        assert_eq!(limits, expected);
        assert_eq!(settings.script.limits.source.max_script_bytes(), 2 << 20);
        assert_eq!(LimitArgs::default().limits(), geogen::Limits::default());
        assert!(Cli::try_parse_from(["geogen", "run", "s.ggs", "--max-heap", "0"]).is_err());
    }

    #[test]
    fn sizes_and_params_parse() {
        assert_eq!(parse_size("800x600"), Ok((800, 600)));
        assert_eq!(parse_size("512"), Ok((512, 512)));
        assert!(parse_size("0x5").is_err());
        assert!(parse_size("axb").is_err());
        assert_eq!(parse_size("4294967295x1"), Ok((u32::MAX, 1)));
        let too_large = parse_size("4294967296x1").unwrap_err();
        assert!(too_large.contains("too large") && too_large.contains("4294967295"), "{too_large}");
        assert!(parse_size("-5").unwrap_err().contains("not a whole number"));
        assert_eq!(parse_param("A=b=c"), Ok(("A".to_string(), "b=c".to_string())));
        assert!(parse_param("=1").is_err());
        assert!(parse_param("nope").is_err());
        assert_eq!(parse_point("-500,-20"), Ok((-500, -20)));
        assert!(parse_point("1").is_err());
        assert_eq!(parse_region("-10,5,100,50"), Ok((-10, 5, 100, 50)));
        assert!(parse_region("1,2,3").is_err());
        assert!(parse_region("1,2,0,3").is_err());
    }
}
