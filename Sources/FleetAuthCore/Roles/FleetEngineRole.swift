/// A Fleet Engine IAM role and the permissions it grants.
///
/// A role belongs to the service account that signs a token, never to the token: the `authorization` claims
/// only narrow what the role allows to particular resources. The eleven roles and their permission lists are
/// Google's ([Fleet Engine roles and permissions](https://cloud.google.com/iam/docs/roles-permissions/fleetengine);
/// see <doc:RolesAndPermissions>).
public struct FleetEngineRole: Sendable, Hashable, CustomStringConvertible {
    /// The IAM role ID, such as `roles/fleetengine.driverSdkUser`.
    public let id: String
    /// The role's title in the Google Cloud console.
    public let title: String
    /// What the role may do.
    public let permissions: Set<FleetEnginePermission>
    /// Whether Fleet Engine ignores the `authorization` claims of tokens signed by an account with this role, for
    /// the methods the role grants: true for the two admin roles only ("This role ignores custom JWT claims").
    public let ignoresAuthorizationClaims: Bool

    public init(
        id: String,
        title: String,
        permissions: Set<FleetEnginePermission>,
        ignoresAuthorizationClaims: Bool = false
    ) {
        self.id = id
        self.title = title
        self.permissions = permissions
        self.ignoresAuthorizationClaims = ignoresAuthorizationClaims
    }

    public var description: String { id }

    /// Whether the role grants `permission`.
    public func grants(_ permission: FleetEnginePermission) -> Bool { permissions.contains(permission) }

    /// The role with this ID (`roles/fleetengine.driverSdkUser`, or the short form `driverSdkUser`).
    public init?(id: String) {
        let full = id.hasPrefix("roles/") ? id : "roles/fleetengine.\(id)"
        guard let role = Self.all.first(where: { $0.id == full }) else { return nil }
        self = role
    }

    private typealias P = FleetEnginePermission

    /// Consumer SDK: read trips and vehicles, search vehicles.
    public static let consumerSdkUser = Self(
        id: "roles/fleetengine.consumerSdkUser",
        title: "Fleet Engine Consumer SDK User",
        permissions: [.tripsGet, .vehiclesGet, .vehiclesSearch, .vehiclesSearchFuzzed]
    )
    /// Driver SDK: update vehicle location and routes, read vehicles and trips.
    public static let driverSdkUser = Self(
        id: "roles/fleetengine.driverSdkUser",
        title: "Fleet Engine Driver SDK User",
        permissions: [.tripsGet, .tripsSearch, .tripsUpdate, .vehiclesGet, .vehiclesUpdateLocation]
    )
    /// Every on-demand vehicle and trip API.
    public static let serviceSuperUser = Self(
        id: "roles/fleetengine.serviceSuperUser",
        title: "Fleet Engine Service Super User",
        permissions: [
            .tripsCreate, .tripsDelete, .tripsGet, .tripsSearch, .tripsUpdate, .tripsUpdateState,
            .vehiclesCreate, .vehiclesDelete, .vehiclesGet, .vehiclesList, .vehiclesSearch, .vehiclesSearchFuzzed,
            .vehiclesUpdate, .vehiclesUpdateLocation, .projectsGet, .projectsList,
        ]
    )
    /// Everything on-demand, for trusted backends only; the token's claims are ignored.
    public static let ondemandAdmin = Self(
        id: "roles/fleetengine.ondemandAdmin",
        title: "Fleet Engine On-Demand Admin",
        permissions: [
            .tripsAllowAllActions, .tripsCreate, .tripsDelete, .tripsGet, .tripsSearch, .tripsUpdate,
            .tripsUpdateState, .vehiclesAllowAllActions, .vehiclesCreate, .vehiclesDelete, .vehiclesGet,
            .vehiclesList, .vehiclesSearch, .vehiclesSearchFuzzed, .vehiclesUpdate, .vehiclesUpdateLocation,
        ],
        ignoresAuthorizationClaims: true
    )
    /// Delivery consumer: search tasks by tracking ID, read tracking info.
    public static let deliveryConsumer = Self(
        id: "roles/fleetengine.deliveryConsumer",
        title: "Fleet Engine Delivery Consumer User",
        permissions: [.tasksSearchWithTrackingID, .taskTrackingInfoGet]
    )
    /// Untrusted delivery driver: update its delivery vehicle's location.
    public static let deliveryUntrustedDriver = Self(
        id: "roles/fleetengine.deliveryUntrustedDriver",
        title: "Fleet Engine Delivery Untrusted Driver User",
        permissions: [.deliveryVehiclesGet, .deliveryVehiclesUpdateLocation]
    )
    /// Trusted delivery driver: create and update delivery vehicles and tasks.
    public static let deliveryTrustedDriver = Self(
        id: "roles/fleetengine.deliveryTrustedDriver",
        title: "Fleet Engine Delivery Trusted Driver User",
        permissions: [
            .deliveryVehiclesCreate, .deliveryVehiclesGet, .deliveryVehiclesUpdate, .deliveryVehiclesUpdateLocation,
            .deliveryVehiclesUpdateVehicleStops, .tasksCreate, .tasksUpdate,
        ]
    )
    /// Read delivery vehicles and tasks, search by tracking ID.
    public static let deliveryFleetReader = Self(
        id: "roles/fleetengine.deliveryFleetReader",
        title: "Fleet Engine Delivery Fleet Reader User",
        permissions: [
            .deliveryVehiclesGet, .deliveryVehiclesList, .tasksGet, .tasksList, .tasksSearchWithTrackingID,
            .taskTrackingInfoGet,
        ]
    )
    /// Every delivery API.
    public static let deliverySuperUser = Self(
        id: "roles/fleetengine.deliverySuperUser",
        title: "Fleet Engine Delivery Super User",
        permissions: [
            .deliveryVehiclesCreate, .deliveryVehiclesDelete, .deliveryVehiclesGet, .deliveryVehiclesList,
            .deliveryVehiclesUpdate, .deliveryVehiclesUpdateLocation, .deliveryVehiclesUpdateVehicleStops,
            .tasksCreate, .tasksDelete, .tasksGet, .tasksList, .tasksSearchWithTrackingID, .tasksUpdate,
            .taskTrackingInfoGet,
        ]
    )
    /// Everything delivery, for trusted backends only; the token's claims are ignored.
    public static let deliveryAdmin = Self(
        id: "roles/fleetengine.deliveryAdmin",
        title: "Fleet Engine Delivery Admin",
        permissions: [
            .deliveryVehiclesCreate, .deliveryVehiclesDelete, .deliveryVehiclesGet, .deliveryVehiclesList,
            .deliveryVehiclesUpdate, .deliveryVehiclesUpdateLocation, .deliveryVehiclesUpdateVehicleStops,
            .tasksCreate, .tasksDelete, .tasksGet, .tasksList, .tasksSearchWithTrackingID, .tasksUpdate,
            .taskTrackingInfoGet,
        ],
        ignoresAuthorizationClaims: true
    )
    /// Read-only over the whole fleet.
    public static let viewer = Self(
        id: "roles/fleetengine.viewer",
        title: "Fleet Engine Viewer",
        permissions: [
            .deliveryVehiclesGet, .deliveryVehiclesList, .tasksGet, .tasksList, .tasksSearchWithTrackingID,
            .taskTrackingInfoGet, .tripsGet, .tripsSearch, .vehiclesGet, .vehiclesList, .vehiclesSearch,
            .vehiclesSearchFuzzed,
        ]
    )

    /// The eleven Fleet Engine roles.
    public static let all: [Self] = [
        consumerSdkUser, driverSdkUser, serviceSuperUser, ondemandAdmin, deliveryConsumer, deliveryUntrustedDriver,
        deliveryTrustedDriver, deliveryFleetReader, deliverySuperUser, deliveryAdmin, viewer,
    ]
}
