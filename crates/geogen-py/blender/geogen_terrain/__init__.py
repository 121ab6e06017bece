"""geogen terrain: a Blender add-on that makes a terrain mesh from a GeoGen Script.

Add ▸ Mesh ▸ geogen terrain adds a grid mesh whose heights geogen renders from a script (the
built-in example island when no script file is given). The object keeps its settings (script
file, the script's parameters, seed, size, pixel size, height scale) in the Object properties'
"geogen terrain" panel, and its mesh is made again whenever one of them changes.

Heights: vertex (row i, column j) of an N × N mesh is pixel (j, i) of the N × N render
`geogen render SCRIPT --size N --seed S -p ...`, and its z is that pixel's 16-bit value v, as the
CLI's `--format r16` (or png16) file holds it, normalised so that the sea level is z = 0:

    z = (v - 32767) / 32767 × height scale

so heights -1, 0 and 1 become -height scale, 0 and +height scale. x and y are centred on the
object's origin, `pixel size` metres apart, row 0 (the map's north) towards +y. UVs map each
vertex to its pixel's centre in the material's image: the map's colored preview
(`--format colored`) of the same heights.

Works with Blender 3.4 as a legacy add-on (bl_info) whose zip carries the compiled `geogen`
package, and with Blender 4.2+ as an extension whose manifest installs geogen's wheel
(scripts/blender-addon.sh builds both).
"""

import os

import bpy
import numpy as np

try:
    # The zip scripts/blender-addon.sh builds carries the compiled package inside the add-on.
    from . import geogen
except ImportError:
    # As a Blender 4.2+ extension, the package comes from the wheel the manifest lists.
    import geogen

bl_info = {
    "name": "geogen terrain",
    "author": "geogen",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "View3D > Add > Mesh > geogen terrain",
    "description": "A terrain mesh rendered by geogen from a GeoGen Script, made again as its settings change",
    "doc_url": "",
    "category": "Add Mesh",
}

#: The 16-bit value of height 0 (the sea level) and of height 1 above it (see the module docs).
R16_ZERO = 32767.0

#: Compiled scripts by (path, modification time, size): a script file is compiled again when it
#: changes, not at every regeneration.
_compiled = {}

#: Objects whose settings are being filled in by this add-on: their updates do not regenerate.
_quiet = set()

#: Enum items of parameters by their item list: Blender needs the strings of dynamic enum items
#: kept alive by Python.
_enum_items = {}


def compiled_script(path):
    """The compiled script of `path` (the built-in example island when it is empty)."""
    if not path:
        key = ("", 0, 0)
        if key not in _compiled:
            _compiled[key] = geogen.Script(geogen.EXAMPLE_ISLAND, name="island.ggs")
        return _compiled[key]
    path = bpy.path.abspath(path)
    try:
        status = os.stat(path)
        key = (path, status.st_mtime_ns, status.st_size)
    except OSError:
        key = (path, 0, 0)
    if key not in _compiled:
        for old in [k for k in _compiled if k[0] == path]:
            del _compiled[old]
        _compiled[key] = geogen.Script.from_file(path)
    return _compiled[key]


def _regenerate_owner(item, context):
    """Update callback of every setting: the object owning it is made again."""
    owner = item.id_data
    if isinstance(owner, bpy.types.Object) and owner.name not in _quiet:
        regenerate(owner)


def _script_changed(settings, context):
    owner = settings.id_data
    if owner.name in _quiet:
        return
    load_parameters(owner)
    regenerate(owner)


def _choice_items(item, context):
    names = tuple(n for n in item.items_text.split("\n") if n)
    if names not in _enum_items:
        _enum_items[names] = [(n, n, "") for n in names]
    return _enum_items[names]


class GeogenParameter(bpy.types.PropertyGroup):
    """One parameter the script declares (its metadata), and the value chosen for it. `name` is
    the parameter's name in the script."""

    label: bpy.props.StringProperty()
    description: bpy.props.StringProperty()
    kind: bpy.props.StringProperty(description="number, boolean or enum")
    number: bpy.props.FloatProperty(update=_regenerate_owner, precision=4)
    minimum: bpy.props.FloatProperty()
    maximum: bpy.props.FloatProperty()
    integers: bpy.props.BoolProperty()
    boolean: bpy.props.BoolProperty(update=_regenerate_owner)
    items_text: bpy.props.StringProperty(description="The enum's item names, one a line")
    choice: bpy.props.EnumProperty(items=_choice_items, update=_regenerate_owner)

    def value(self):
        """The value as geogen.Script.render takes it."""
        if self.kind == "boolean":
            return bool(self.boolean)
        if self.kind == "enum":
            return self.choice
        return float(self.number)


class GeogenTerrainSettings(bpy.types.PropertyGroup):
    """What an object's terrain is made from."""

    is_terrain: bpy.props.BoolProperty()
    script_path: bpy.props.StringProperty(
        name="Script",
        description="The GeoGen Script (.ggs) or Height-Slang program (.hs); empty: the built-in example island",
        subtype="FILE_PATH",
        update=_script_changed,
    )
    seed: bpy.props.IntProperty(name="Seed", min=0, update=_regenerate_owner)
    size: bpy.props.IntProperty(
        name="Size",
        description="Vertices per side: the render is Size x Size pixels",
        default=129,
        min=2,
        max=8193,
        update=_regenerate_owner,
    )
    pixel_size: bpy.props.FloatProperty(
        name="Pixel size",
        description="Metres between two neighbouring vertices",
        default=1.0,
        min=1e-6,
        soft_max=100.0,
        unit="LENGTH",
        update=_regenerate_owner,
    )
    height_scale: bpy.props.FloatProperty(
        name="Height scale",
        description="Metres of height 1; the sea level (height 0) is z = 0",
        default=20.0,
        soft_min=0.0,
        unit="LENGTH",
        update=_regenerate_owner,
    )
    parameters: bpy.props.CollectionProperty(type=GeogenParameter)
    error: bpy.props.StringProperty(description="Why the last regeneration failed")


def load_parameters(obj):
    """Fills the object's parameter list from its script's metadata, keeping the values of
    parameters that keep their name and kind."""
    settings = obj.geogen_terrain
    try:
        info = compiled_script(settings.script_path).info()
    except geogen.GeogenError as error:
        settings.error = str(error)
        return False
    kept = {p.name: (p.kind, p.value()) for p in settings.parameters}
    _quiet.add(obj.name)
    try:
        settings.parameters.clear()
        for declared in info["parameters"]:
            item = settings.parameters.add()
            item.name = declared["name"]
            item.label = declared.get("label") or declared["name"]
            item.description = declared.get("description") or ""
            item.kind = declared["kind"]
            old_kind, old_value = kept.get(item.name, (None, None))
            if item.kind == "number":
                item.minimum = declared["min"]
                item.maximum = declared["max"]
                item.integers = declared.get("restriction") == "Integers"
                item.number = old_value if old_kind == "number" else declared["default"]
            elif item.kind == "boolean":
                item.boolean = old_value if old_kind == "boolean" else declared["default"]
            else:
                names = [entry["name"] for entry in declared["items"]]
                item.items_text = "\n".join(names)
                item.choice = old_value if old_kind == "enum" and old_value in names else declared["default"]
    finally:
        _quiet.discard(obj.name)
    return True


def terrain_grid(heights, pixel_size):
    """Vertex positions (n² × 3), quad vertex indices ((n - 1)² × 4) and per-loop UVs of an n × n
    height grid, in the layout the module docs describe."""
    n = heights.shape[0]
    rows, columns = np.meshgrid(np.arange(n, dtype=np.float64), np.arange(n, dtype=np.float64), indexing="ij")
    middle = (n - 1) / 2.0
    positions = np.empty((n, n, 3), dtype=np.float64)
    positions[..., 0] = (columns - middle) * pixel_size
    positions[..., 1] = (middle - rows) * pixel_size
    positions[..., 2] = heights
    corner = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)[None, :]).ravel()
    # Top-left, bottom-left, bottom-right, top-right: counter-clockwise seen from above.
    quads = np.stack([corner, corner + n, corner + n + 1, corner + 1], axis=1)
    loop_vertices = quads.ravel()
    uv = np.empty((loop_vertices.size, 2), dtype=np.float64)
    uv[:, 0] = (loop_vertices % n + 0.5) / n
    uv[:, 1] = 1.0 - (loop_vertices // n + 0.5) / n
    return positions.reshape(-1, 3), quads, uv


def fill_mesh(mesh, positions, quads, uv):
    mesh.clear_geometry()
    mesh.vertices.add(len(positions))
    mesh.vertices.foreach_set("co", positions.astype(np.float32).ravel())
    mesh.loops.add(quads.size)
    mesh.loops.foreach_set("vertex_index", quads.astype(np.int32).ravel())
    mesh.polygons.add(len(quads))
    mesh.polygons.foreach_set("loop_start", np.arange(0, quads.size, 4, dtype=np.int32))
    try:
        mesh.polygons.foreach_set("loop_total", np.full(len(quads), 4, dtype=np.int32))
    except (AttributeError, TypeError, RuntimeError):
        pass  # Blender 4 derives the loop counts from the starts.
    uv_layer = mesh.uv_layers.new(name="UVMap")
    uv_layer.data.foreach_set("uv", uv.astype(np.float32).ravel())
    mesh.update(calc_edges=True)
    mesh.validate()


def preview_material(obj, heights):
    """The object's material: the colored preview of `heights` as an image texture."""
    n = heights.shape[0]
    image_name = f"geogen {obj.name}"
    image = bpy.data.images.get(image_name)
    if image is None:
        image = bpy.data.images.new(image_name, n, n, alpha=False)
    elif tuple(image.size) != (n, n):
        image.scale(n, n)
    rgb = geogen.colored(heights).astype(np.float32) / 255.0
    rgba = np.ones((n, n, 4), dtype=np.float32)
    rgba[..., :3] = rgb[::-1]  # Blender's image rows go from the bottom up.
    image.pixels.foreach_set(rgba.ravel())
    image.update()
    image.pack()

    material_name = f"geogen {obj.name}"
    material = bpy.data.materials.get(material_name)
    if material is None:
        material = bpy.data.materials.new(material_name)
        material.use_nodes = True
        nodes = material.node_tree.nodes
        shader = nodes.get("Principled BSDF")
        texture = nodes.new("ShaderNodeTexImage")
        texture.name = "geogen preview"
        texture.location = (-400, 300)
        texture.interpolation = "Linear"
        if shader is not None:
            material.node_tree.links.new(texture.outputs["Color"], shader.inputs["Base Color"])
    material.node_tree.nodes["geogen preview"].image = image
    if not obj.data.materials:
        obj.data.materials.append(material)
    else:
        obj.data.materials[0] = material
    return material


def regenerate(obj):
    """Renders the object's terrain and makes its mesh and material again. A failure leaves the
    mesh as it was and is shown in the panel (and returned)."""
    settings = obj.geogen_terrain
    n = settings.size
    try:
        script = compiled_script(settings.script_path)
        parameters = {p.name: p.value() for p in settings.parameters}
        samples = script.render_r16(0, 0, n, n, seed=settings.seed, params=parameters)
    except geogen.GeogenError as error:
        settings.error = str(error)
        return str(error)
    heights = ((samples.astype(np.float64) - R16_ZERO) / R16_ZERO).astype(np.float32)
    positions, quads, uv = terrain_grid(heights.astype(np.float64) * settings.height_scale, settings.pixel_size)
    fill_mesh(obj.data, positions, quads, uv)
    preview_material(obj, heights)
    settings.error = ""
    return None


class MESH_OT_geogen_terrain_add(bpy.types.Operator):
    """Add a terrain mesh rendered by geogen from a GeoGen Script"""

    bl_idname = "mesh.geogen_terrain_add"
    bl_label = "geogen terrain"
    bl_options = {"REGISTER", "UNDO"}

    script_path: bpy.props.StringProperty(
        name="Script",
        description="The GeoGen Script (.ggs) or Height-Slang program (.hs); empty: the built-in example island",
        subtype="FILE_PATH",
    )
    seed: bpy.props.IntProperty(name="Seed", min=0)
    size: bpy.props.IntProperty(name="Size", description="Vertices per side", default=129, min=2, max=8193)
    pixel_size: bpy.props.FloatProperty(name="Pixel size", default=1.0, min=1e-6, soft_max=100.0, unit="LENGTH")
    height_scale: bpy.props.FloatProperty(name="Height scale", default=20.0, soft_min=0.0, unit="LENGTH")

    def execute(self, context):
        try:
            compiled_script(self.script_path)
        except geogen.GeogenError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        mesh = bpy.data.meshes.new("geogen terrain")
        obj = bpy.data.objects.new("geogen terrain", mesh)
        context.collection.objects.link(obj)
        obj.location = context.scene.cursor.location
        _quiet.add(obj.name)
        try:
            settings = obj.geogen_terrain
            settings.is_terrain = True
            settings.script_path = self.script_path
            settings.seed = self.seed
            settings.size = self.size
            settings.pixel_size = self.pixel_size
            settings.height_scale = self.height_scale
        finally:
            _quiet.discard(obj.name)
        load_parameters(obj)
        failure = regenerate(obj)
        for selected in context.selected_objects:
            selected.select_set(False)
        obj.select_set(True)
        context.view_layer.objects.active = obj
        if failure:
            self.report({"ERROR"}, failure)
        return {"FINISHED"}


class OBJECT_OT_geogen_terrain_regenerate(bpy.types.Operator):
    """Read the script file again (its parameters too) and make the terrain again"""

    bl_idname = "object.geogen_terrain_regenerate"
    bl_label = "Regenerate"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        obj = context.object
        return obj is not None and obj.geogen_terrain.is_terrain

    def execute(self, context):
        obj = context.object
        load_parameters(obj)
        failure = regenerate(obj)
        if failure:
            self.report({"ERROR"}, failure)
            return {"CANCELLED"}
        return {"FINISHED"}


def draw_settings(layout, obj):
    settings = obj.geogen_terrain
    layout.prop(settings, "script_path")
    column = layout.column(align=True)
    column.prop(settings, "seed")
    column.prop(settings, "size")
    column.prop(settings, "pixel_size")
    column.prop(settings, "height_scale")
    if settings.parameters:
        box = layout.box()
        box.label(text="Parameters")
        for item in settings.parameters:
            row = box.row()
            if item.kind == "boolean":
                row.prop(item, "boolean", text=item.label)
            elif item.kind == "enum":
                row.prop(item, "choice", text=item.label)
            else:
                row.prop(item, "number", text=item.label)
                row.label(text=f"{item.minimum:g} to {item.maximum:g}")
    layout.operator(OBJECT_OT_geogen_terrain_regenerate.bl_idname, icon="FILE_REFRESH")
    if settings.error:
        box = layout.box()
        for line in settings.error.splitlines()[:12]:
            box.label(text=line, icon="ERROR" if line.startswith("error") else "NONE")


class OBJECT_PT_geogen_terrain(bpy.types.Panel):
    bl_label = "geogen terrain"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "object"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.geogen_terrain.is_terrain

    def draw(self, context):
        draw_settings(self.layout, context.object)


class VIEW3D_PT_geogen_terrain(bpy.types.Panel):
    bl_label = "geogen terrain"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "geogen"

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.geogen_terrain.is_terrain

    def draw(self, context):
        draw_settings(self.layout, context.object)


def menu_entry(self, context):
    self.layout.operator(MESH_OT_geogen_terrain_add.bl_idname, text="geogen terrain", icon="RNDCURVE")


CLASSES = (
    GeogenParameter,
    GeogenTerrainSettings,
    MESH_OT_geogen_terrain_add,
    OBJECT_OT_geogen_terrain_regenerate,
    OBJECT_PT_geogen_terrain,
    VIEW3D_PT_geogen_terrain,
)


def register():
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Object.geogen_terrain = bpy.props.PointerProperty(type=GeogenTerrainSettings)
    bpy.types.VIEW3D_MT_mesh_add.append(menu_entry)


def unregister():
    bpy.types.VIEW3D_MT_mesh_add.remove(menu_entry)
    del bpy.types.Object.geogen_terrain
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
